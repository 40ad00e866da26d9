//! The one list of end-to-end tests. Each takes a [`Deployment`] and is run against nginx
//! with the generated configuration (plus svcdir-search) and against `svcdir serve`; see
//! `main.rs`. Detailed search rules are tested elsewhere (tests/search*.rs); here a basic
//! query shows that search is reachable and answers as the API says.

use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use serde_json::Value;
use svcdir::api::Format;
use svcdir::api::bodies;
use svcdir::api::headers::{self, Origin};
use svcdir::api::routing::{self, Answer, Missing, Route};

use crate::support::{BASE_URL, Build, Deployment, Response};

const JSON: &str = "application/json";
const HTML: &str = "text/html; charset=utf-8";
const BROWSER: &str = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";

/// A service or an organisation: id, slug.
#[derive(Debug, Clone)]
struct Keys {
    id: String,
    slug: String,
}

/// Every published service and organisation of a build, read from its import pages.
fn keys(build: &Build) -> (Vec<Keys>, Vec<Keys>) {
    let mut services = Vec::new();
    let mut organisations: Vec<Keys> = Vec::new();
    let mut page = 1;
    loop {
        let json = build.json(&format!("api/v4/import/page/{page}/index.json"));
        for s in json["data"].as_array().expect("data") {
            let key = |v: &Value| Keys {
                id: v["id"].as_str().unwrap().to_owned(),
                slug: v["slug"].as_str().unwrap().to_owned(),
            };
            services.push(key(s));
            let org = key(&s["organisation"]);
            if !organisations.iter().any(|o| o.id == org.id) {
                organisations.push(org);
            }
        }
        if json["next"].is_null() {
            return (services, organisations);
        }
        page += 1;
    }
}

/// The API's headers, on every response (behaviour.md, Routing).
fn assert_api_headers(r: &Response, what: &str) {
    assert_eq!(r.header("allow"), Some("GET, HEAD, OPTIONS"), "{what}: {r:?}");
    assert!(r.header_list("vary").iter().any(|v| v.eq_ignore_ascii_case("accept")), "{what}: {r:?}");
    assert_eq!(r.header("access-control-allow-origin"), Some("*"), "{what}: {r:?}");
    assert!(r.header("cache-control").is_some(), "{what}: {r:?}");
    // issue 28: no sniffing anywhere; the HTML views' CSP, on them only.
    assert_eq!(r.header("x-content-type-options"), Some("nosniff"), "{what}: {r:?}");
    let csp = headers::is_html(r.content_type()).then_some(headers::HTML_CSP);
    assert_eq!(r.header("content-security-policy"), csp, "{what}: {r:?}");
    assert!(!(300..400).contains(&r.status), "{what}: no redirects: {r:?}");
}

fn assert_json(r: &Response, status: u16, what: &str) -> Value {
    assert_eq!(r.status, status, "{what}: {}", r.text());
    assert_eq!(r.content_type(), JSON, "{what}");
    assert_api_headers(r, what);
    r.json()
}

fn assert_html(r: &Response, status: u16, what: &str) -> String {
    assert_eq!(r.status, status, "{what}: {}", r.text());
    assert_eq!(r.content_type(), HTML, "{what}");
    assert_api_headers(r, what);
    let text = r.text();
    assert!(text.starts_with("<!doctype html>"), "{what}: {text}");
    text
}

/// Every static endpoint of api-spec.md answers 200 with and without its trailing slash,
/// with the bytes of its file: lists, the import, every service and organisation by id and
/// by slug.
pub fn static_endpoints_answer_with_and_without_slash(d: &Deployment) {
    let (services, organisations) = keys(&d.build);
    let mut folders: Vec<String> =
        ["api/v4/categories", "api/v4/service-areas", "api/v3/categories", "api/v3/service-areas", "api/v4/import"]
            .map(str::to_owned)
            .to_vec();
    for s in &services {
        folders.push(format!("api/v4/services/{}", s.id));
        folders.push(format!("api/v4/services/{}", s.slug));
    }
    for o in &organisations {
        folders.push(format!("api/v4/organisations/{}", o.id));
        folders.push(format!("api/v4/organisations/{}", o.slug));
    }
    assert!(services.len() >= 5 && organisations.len() >= 2);
    for folder in folders {
        let file = d.build.file(&format!("{folder}/index.json"));
        for target in [format!("/{folder}/"), format!("/{folder}")] {
            let r = d.get(&target);
            assert_json(&r, 200, &target);
            assert!(r.body == file, "{target}: not the bytes of {folder}/index.json");
        }
    }
}

/// A service and an organisation answer the same JSON by id and by slug.
pub fn resources_by_id_and_by_slug_are_identical(d: &Deployment) {
    let (services, organisations) = keys(&d.build);
    for (kind, list) in [("services", &services), ("organisations", &organisations)] {
        for k in list {
            let by_id = d.get(&format!("/api/v4/{kind}/{}/", k.id));
            let by_slug = d.get(&format!("/api/v4/{kind}/{}", k.slug));
            let json = assert_json(&by_id, 200, &k.id);
            assert_json(&by_slug, 200, &k.slug);
            assert_eq!(by_id.body, by_slug.body, "{kind} {} / {}", k.id, k.slug);
            assert_eq!(json["data"]["id"], k.id.as_str());
            assert_eq!(json["data"]["slug"], k.slug.as_str());
            assert_eq!(json["meta"]["attribution"].as_array().map(Vec::len), Some(4));
        }
    }
}

/// Categories and service areas, v4 and v3, in their shapes (api-spec.md).
pub fn categories_and_service_areas_in_v4_and_v3(d: &Deployment) {
    let v4 = assert_json(&d.get("/api/v4/categories/"), 200, "v4 categories");
    assert_eq!(v4["meta"]["attribution"], serde_json::json!([]));
    let tree = v4["data"].as_array().expect("tree");
    assert!(tree.iter().all(|c| c["sub_categories"].is_array() && c["slug"].is_string()));
    let v3 = assert_json(&d.get("/api/v3/categories"), 200, "v3 categories");
    let flat = v3.as_array().expect("bare array");
    assert!(flat.iter().all(|c| c["id"].is_u64() && (c["parent"].is_null() || c["parent"].is_u64())));
    assert!(flat.len() > tree.len(), "v3 lists every level");

    let areas = assert_json(&d.get("/api/v4/service-areas"), 200, "v4 areas");
    assert_eq!(areas["meta"]["attribution"].as_array().map(Vec::len), Some(2));
    let names: Vec<&str> = areas["data"].as_array().unwrap().iter().map(|a| a["type"].as_str().unwrap()).collect();
    assert!(names.contains(&"Local Authority") && names.contains(&"Country"), "{names:?}");
    let v3 = assert_json(&d.get("/api/v3/service-areas/"), 200, "v3 areas");
    assert!(v3.as_array().unwrap().iter().all(|a| a["type"].as_str().unwrap().parse::<u8>().is_ok()));
}

/// The import: `next` links, absolute from the configured base URL, lead page by page to
/// the end; every service once, in id order; `previous` leads back.
pub fn import_next_links_lead_through_every_page(d: &Deployment) {
    let first = assert_json(&d.get("/api/v4/import/"), 200, "import");
    let count = first["count"].as_u64().unwrap() as usize;
    assert!(first["previous"].is_null());
    assert_eq!(d.get("/api/v4/import/?format=json&page=1").body, d.get("/api/v4/import").body);
    let mut ids = Vec::new();
    let mut page = first;
    let mut n = 1;
    loop {
        ids.extend(page["data"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().to_owned()));
        let Some(next) = page["next"].as_str().map(str::to_owned) else {
            break;
        };
        n += 1;
        assert_eq!(next, format!("{BASE_URL}/api/v4/import/?format=json&page={n}"));
        page = assert_json(&d.follow(&next), 200, &next);
        let previous = page["previous"].as_str().expect("previous");
        let back = d.follow(previous).json();
        assert_eq!(back["next"].as_str(), Some(next.as_str()));
    }
    assert!(n >= 3, "page size 2 gives several pages");
    assert_eq!(ids.len(), count);
    let mut sorted = ids.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(ids, sorted, "every service once, in id order");
    assert_eq!(d.get(&format!("/api/v4/import/?page={n}")).json()["next"], Value::Null);
}

/// Page 0, a page that is not a number, or past the end: 404 `Invalid page.`
pub fn import_invalid_pages_are_404(d: &Deployment) {
    for page in ["0", "-1", "two", "", "1.5", "99", "18446744073709551616"] {
        let target = format!("/api/v4/import/?format=json&page={page}");
        let json = assert_json(&d.get(&target), 404, &target);
        assert_eq!(json, serde_json::json!({"detail": "Invalid page."}), "{target}");
    }
    let html = assert_html(&d.get("/api/v4/import/?format=api&page=0"), 404, "invalid page, HTML");
    assert!(html.contains("Invalid page."), "{html}");
}

/// Search v4 and v3 answer a postcode, with both slash forms, links from the configured
/// base URL whatever the Host header says.
pub fn search_answers_in_v4_and_v3(d: &Deployment) {
    for target in ["/api/v4/services/?postcode=G2+1AL", "/api/v4/services?postcode=g21al&page_size=1"] {
        let r = d.send("GET", target, &[("host", "evil.example")]);
        let json = assert_json(&r, 200, target);
        assert!(json["count"].as_u64().unwrap() >= 1, "{json}");
        assert_eq!(json["meta"]["attribution"].as_array().map(Vec::len), Some(4));
        assert!(json["data"][0]["locations"].is_array() && json["data"][0]["slug"].is_string());
        assert_eq!(r.header("cache-control"), Some(headers::CACHE_SEARCH));
        if let Some(next) = json["next"].as_str() {
            assert!(next.starts_with(&format!("{BASE_URL}/api/v4/services/?")), "{next}");
            assert_json(&d.follow(next), 200, next);
        }
    }
    let v4 = d.get("/api/v4/services/?postcode=G2%201AL&page_size=100").json();
    for target in ["/api/v3/search/?postcode=G2+1AL", "/api/v3/search?postcode=G2%201AL"] {
        let json = assert_json(&d.get(target), 200, target);
        assert_eq!(json["count"], v4["count"], "{target}");
        assert!(json["results"].is_array() && json.get("meta").is_none(), "{json}");
    }
    let bad = assert_json(&d.get("/api/v4/services/"), 400, "no postcode");
    assert_eq!(bad, serde_json::json!({"postcode": ["This field is required."]}));
    assert_eq!(d.get("/api/v4/services/").header("cache-control"), Some(headers::CACHE_ERROR));
}

/// `format=json`, `format=api`, an Accept header preferring HTML, and a bad format, on a
/// static endpoint, a search and a 404.
pub fn format_and_accept_choose_json_or_html(d: &Deployment) {
    for path in ["/api/v4/categories/", "/api/v4/services/?postcode=G2+1AL", "/no/such/path"] {
        let join = |q: &str| {
            if path.contains('?') { format!("{path}&{q}") } else { format!("{path}?{q}") }
        };
        let status = if path.starts_with("/no/") { 404 } else { 200 };
        assert_json(&d.send("GET", &join("format=json"), &[("accept", "text/html")]), status, path);
        let html = assert_html(&d.get(&join("format=api")), status, path);
        assert!(html.contains("This response as JSON"), "{html}");
        assert_html(&d.send("GET", path, &[("accept", BROWSER)]), status, path);
        assert_json(&d.send("GET", path, &[("accept", "*/*")]), status, path);
        assert_json(&d.get(path), status, path);
        let bad = assert_json(&d.send("GET", &join("format=xml"), &[("accept", BROWSER)]), 404, path);
        assert_eq!(bad, serde_json::json!({"detail": "Not found."}), "{path}");
    }
}

/// Parameter names are compared decoded, letters percent-encoded or not, and the last
/// `format` or `page` wins whichever way each was written (the fourth probe, defect 12).
pub fn encoded_parameter_names_are_decoded(d: &Deployment) {
    let path = "/api/v4/categories/";
    for query in ["%66ormat=api", "f%6Frmat=api", "%66%6F%72%6D%61%74=api", "format=json&%66ormat=api"] {
        let target = format!("{path}?{query}");
        assert!(assert_html(&d.get(&target), 200, &target).contains("This response as JSON"), "{target}");
    }
    for query in ["f%6Frmat=json", "%66ormat=api&format=json", "%66ormat=json"] {
        let target = format!("{path}?{query}");
        assert_json(&d.send("GET", &target, &[("accept", BROWSER)]), 200, &target);
    }
    // An encoded capital is another name, which the API ignores: Accept decides.
    assert_json(&d.get(&format!("{path}?%46ormat=api")), 200, "%46ormat");
    assert_json(&d.get(&format!("{path}?%66ormat=xml")), 404, "%66ormat=xml");

    let page = |n: &str| d.get(&format!("/api/v4/import/?format=json&page={n}")).body;
    let last = {
        let first = d.get("/api/v4/import/").json();
        first["count"].as_u64().unwrap().div_ceil(first["data"].as_array().unwrap().len() as u64)
    };
    for (query, expected) in [
        ("p%61ge=2", page("2")),
        ("%70%61%67%65=2", page("2")),
        ("p%61ge=last", page(&last.to_string())),
        ("page=2&p%61ge=1", page("1")),
        ("p%61ge=1&page=2", page("2")),
    ] {
        let target = format!("/api/v4/import/?format=json&{query}");
        let r = d.get(&target);
        assert_eq!(r.status, 200, "{target}");
        assert!(r.body == expected, "{target}: another page");
    }
    let target = "/api/v4/import/?p%61ge=0";
    assert_eq!(assert_json(&d.get(target), 404, target)["detail"], "Invalid page.", "{target}");
}

/// Accept headers of every shape get HTML exactly when `prefers_html` says so, on a static
/// endpoint (nginx's maps, or the preview's Rust) and on a search (the search server).
pub fn accept_headers_agree_with_prefers_html(d: &Deployment) {
    let mut headers: Vec<String> = [
        "",
        "*/*",
        "text/html",
        "TEXT/HTML",
        "text/*",
        "application/json",
        "application/*",
        BROWSER,
        "text/html, application/json",
        "application/json, text/html",
        "text/html;q=0.5, application/json",
        "text/html;q=0.5, application/json;q=0.4",
        "text/html;q=0.5, application/json;q=0.50",
        "application/json;q=0.5, text/html;q=0.5",
        "text/html;q=0, */*",
        "text/html;q=0.0, application/json;q=0",
        "application/json;q=0, text/*",
        "application/*, text/*",
        "text/*, application/*",
        "text/*;q=0.9, application/*;q=0.9",
        "text/html;level=1;q=0.7, application/json;q=0.69",
        "text/html; q=0.7, application/json; q=0.71",
        "text/html ;q=0.5, application/json",
        "text/html;q=, application/json;q=0.9",
        "text/html;q=.5, application/json;q=0.499",
        "text/html;q=1.000, application/json;q=1",
        "text/html;q=2, application/json",
        "text/html;q=-1, */*",
        "text/html;q=0.123456, application/json;q=0.123455",
        "text/html;q=0.001, */*;q=0.0009",
        "garbage, ;;;",
        "text/htmlx, application/json;q=0.1",
        "application/xhtml+xml, */*;q=0.1",
        "text/html;q=0.5;q=0.9, application/json;q=0.6",
        "*/*, text/html",
        "*/*;q=0.1, text/html;q=0.1",
    ]
    .map(str::to_owned)
    .to_vec();
    // Around the cap on what negotiation reads (negotiate::MAX_ACCEPT_BYTES): a range that
    // ends at the cap counts, one that ends a byte later does not (issue 28).
    let cap = svcdir::api::negotiate::MAX_ACCEPT_BYTES;
    let filler = |n: usize| format!("application/x-{}", "y".repeat(n - "application/x-".len()));
    headers.push(format!("{},text/html", filler(cap - ",text/html".len())));
    headers.push(format!("{},text/html", filler(cap + 1 - ",text/html".len())));
    headers.push(format!("application/json;q=0.1,{},text/html", filler(cap)));
    // And many more from a small grammar, the same every run.
    let ranges = ["text/html", "application/json", "text/*", "application/*", "*/*", "image/webp", "Text/Html"];
    let params =
        ["", ";q=0", ";q=0.5", ";q=1", ";q=0.8", ";q=0.50", ";level=1", ";q=.3", ";q=0.001", ";q=1.0", "; q=0.9"];
    let mut seed: u64 = 0x5eed;
    let mut next = |n: usize| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) as usize % n
    };
    for _ in 0..150 {
        let k = 1 + next(4);
        let parts: Vec<String> =
            (0..k).map(|_| format!("{}{}", ranges[next(ranges.len())], params[next(params.len())])).collect();
        headers.push(parts.join(if next(2) == 0 { "," } else { ", " }));
    }
    let mut disagreements = Vec::new();
    for (i, accept) in headers.iter().enumerate() {
        let expected = if svcdir::api::negotiate::prefers_html(accept) { HTML } else { JSON };
        let mut targets = vec!["/api/v4/categories/"];
        if i < 40 {
            targets.push("/api/v4/services/?postcode=G2+1AL");
        }
        for target in targets {
            let r = if accept.is_empty() { d.get(target) } else { d.send("GET", target, &[("accept", accept)]) };
            assert_eq!(r.status, 200, "{target} {accept:?}");
            if r.content_type() != expected {
                disagreements
                    .push(format!("{target} Accept: {accept:?} gave {}, expected {expected}", r.content_type()));
            }
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

/// Every kind of response carries Allow, Vary, Access-Control-Allow-Origin, the right
/// Content-Type and its Cache-Control.
pub fn every_kind_of_response_has_the_api_headers(d: &Deployment) {
    /// Method, target, request headers, then status, Content-Type and origin expected.
    type Case<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)], u16, &'a str, Origin);
    let cases: [Case<'_>; 14] = [
        ("GET", "/api/v4/services/befriending-line/", &[], 200, JSON, Origin::Static),
        ("GET", "/api/v4/services/befriending-line/", &[("accept", BROWSER)], 200, HTML, Origin::Static),
        ("GET", "/api/v4/import/?format=json&page=2", &[], 200, JSON, Origin::Static),
        ("GET", "/api/v4/import/?format=json&page=0", &[], 404, JSON, Origin::Static),
        ("GET", "/api/v4/import/?format=api&page=9", &[], 404, HTML, Origin::Static),
        ("GET", "/nope", &[], 404, JSON, Origin::Static),
        ("GET", "/nope", &[("accept", BROWSER)], 404, HTML, Origin::Static),
        ("POST", "/api/v4/categories/", &[], 405, JSON, Origin::Static),
        ("OPTIONS", "/api/v4/categories/", &[], 200, JSON, Origin::Static),
        ("HEAD", "/api/v3/categories/", &[], 200, JSON, Origin::Static),
        ("GET", "/api/v4/services/?postcode=G2+1AL", &[], 200, JSON, Origin::Search),
        ("GET", "/api/v3/search/?postcode=G2+1AL&format=api", &[], 200, HTML, Origin::Search),
        ("GET", "/api/v4/services/?postcode=ZZ9+9ZZ", &[], 400, JSON, Origin::Search),
        ("GET", "/api/v4/services/?postcode=G2+1AL&page=7", &[], 404, JSON, Origin::Search),
    ];
    for (method, target, headers, status, content_type, origin) in cases {
        let what = format!("{method} {target} {headers:?}");
        let r = d.send(method, target, headers);
        assert_eq!(r.status, status, "{what}: {}", r.text());
        assert_eq!(r.content_type(), content_type, "{what}");
        assert_api_headers(&r, &what);
        let cache = headers::cache_control(origin, StatusCode::from_u16(status).unwrap());
        assert_eq!(r.header("cache-control"), Some(cache), "{what}");
    }
}

/// HEAD answers the GET's status and headers with no body.
pub fn head_is_get_without_body(d: &Deployment) {
    for target in [
        "/api/v4/categories/",
        "/api/v4/services/befriending-line?format=api",
        "/api/v4/import/?page=2",
        "/api/v4/import/?page=0",
        "/nope",
        "/api/v4/services/?postcode=G2+1AL",
        "/api/v4/services/",
    ] {
        let get = d.get(target);
        let head = d.send("HEAD", target, &[]);
        assert_eq!(head.status, get.status, "{target}");
        assert!(head.body.is_empty(), "{target}");
        assert_eq!(head.content_type(), get.content_type(), "{target}");
        assert_eq!(head.header("content-length"), Some(get.body.len().to_string().as_str()), "{target}");
        assert_api_headers(&head, target);
    }
}

/// OPTIONS: 200 with the headers and no body, in the form the request asks for.
pub fn options_is_200_with_headers_and_no_body(d: &Deployment) {
    for target in [
        "/api/v4/categories/",
        "/api/v4/services/befriending-line",
        "/api/v4/organisations/cafe-comhla/",
        "/api/v4/import/?page=2",
        "/api/v4/services/",
        "/api/v3/search",
    ] {
        let r = d.send("OPTIONS", target, &[]);
        assert_eq!(r.status, 200, "{target}: {}", r.text());
        assert!(r.body.is_empty(), "{target}");
        assert_eq!(r.content_type(), JSON, "{target}");
        assert_api_headers(&r, target);
        let html = d.send("OPTIONS", target, &[("accept", BROWSER)]);
        assert_eq!((html.status, html.content_type()), (200, HTML), "{target}");
    }
}

/// A CORS preflight (OPTIONS with `Access-Control-Request-Method`) also gets the allowed
/// methods, the requested headers (else the default set) and a max age, on static and
/// search paths alike; nothing else gets them (behaviour.md, Routing).
pub fn cors_preflight_is_answered(d: &Deployment) {
    for target in
        ["/api/v4/categories/", "/api/v4/import/?page=2", "/api/v4/services/?postcode=G2+1AL", "/api/v3/search"]
    {
        let asked = [("origin", "https://app.example"), ("access-control-request-method", "GET")];
        let r = d.send(
            "OPTIONS",
            target,
            &[asked[0], asked[1], ("access-control-request-headers", "x-app-version, authorization")],
        );
        assert_eq!(r.status, 200, "{target}: {}", r.text());
        assert_api_headers(&r, target);
        assert_eq!(r.header("access-control-allow-methods"), Some(headers::CORS_ALLOW_METHODS), "{target}");
        assert_eq!(r.header("access-control-allow-headers"), Some("x-app-version, authorization"), "{target}");
        assert_eq!(r.header("access-control-max-age"), Some("86400"), "{target}");
        let r = d.send("OPTIONS", target, &asked);
        assert_eq!(r.header("access-control-allow-headers"), Some(headers::CORS_DEFAULT_ALLOW_HEADERS), "{target}");
        // Not a preflight: a plain OPTIONS, or a GET that names a method.
        for r in [d.send("OPTIONS", target, &[]), d.send("GET", target, &asked)] {
            assert_eq!(r.header("access-control-allow-origin"), Some("*"), "{target}");
            for header in ["access-control-allow-methods", "access-control-allow-headers", "access-control-max-age"] {
                assert_eq!(r.header(header), None, "{target}: {header}");
            }
        }
    }
    // A preflight to an unknown path is still answered as one (the 404 carries the headers).
    let r = d.send("OPTIONS", "/api/v4/nothing/", &[("access-control-request-method", "GET")]);
    assert_eq!((r.status, r.header("access-control-max-age")), (404, Some("86400")));
}

/// `page=last` is the import's last page (behaviour.md, Search 8): the same JSON as that
/// page's number; only that exact word.
pub fn import_page_last_is_the_last_page(d: &Deployment) {
    let first = d.get("/api/v4/import/").json();
    let pages = first["count"].as_u64().unwrap().div_ceil(first["data"].as_array().unwrap().len() as u64);
    let numbered = d.get(&format!("/api/v4/import/?format=json&page={pages}"));
    for target in
        ["/api/v4/import/?format=json&page=last", "/api/v4/import?page=1&page=last", "/api/v4/import/?page=l%61st"]
    {
        let last = d.get(target);
        assert_eq!(last.status, 200, "{target}");
        assert_eq!(last.body, numbered.body, "{target}");
    }
    assert_eq!(d.get("/api/v4/import/?page=last").json()["next"], Value::Null);
    assert_html(&d.get("/api/v4/import/?format=api&page=last"), 200, "page=last, HTML");
    for target in ["/api/v4/import/?page=LAST", "/api/v4/import/?page=last+", "/api/v4/import/?page=lastly"] {
        assert_eq!(assert_json(&d.get(target), 404, target)["detail"], "Invalid page.", "{target}");
    }
}

/// `q` drops English stop words (behaviour.md, Search 4): only stop words is no `q` at all.
pub fn search_drops_stop_words(d: &Deployment) {
    let all = d.get("/api/v4/services/?postcode=G2+1AL&page_size=100").json();
    let stop = d.get("/api/v4/services/?postcode=G2+1AL&page_size=100&q=for+the+of");
    assert_eq!(stop.status, 200);
    assert_eq!(stop.json()["data"], all["data"]);
    assert_eq!(stop.json()["count"], all["count"]);
}

/// Search answers cached where files are (issue 24): a repeated search is answered from the
/// cache (nginx's `proxy_cache`, the Worker's Cache API) with the bytes svcdir-search sends
/// itself, and JSON and HTML of one query, negotiated by `Accept` or `format`, never mix.
pub fn search_answers_are_cached_as_sent_and_formats_kept_apart(d: &Deployment) {
    // A query no other case asks, so that its first answer is a miss.
    let target = "/api/v4/services/?postcode=G2+1AL&radius=4321&page_size=3";
    let html = [("accept", "text/html")];
    let json = [("accept", "application/json")];
    let mut answers = Vec::new();
    for (n, headers) in [&html[..], &json[..], &html[..], &[][..], &json[..]].into_iter().enumerate() {
        let r = d.send("GET", target, headers);
        assert_eq!(r.status, 200, "{}", r.text());
        let cache = r.header("x-cache-status").map(str::to_owned);
        answers.push((headers, r, cache, n));
    }
    let is_html = |headers: &[(&str, &str)]| headers.first().is_some_and(|h| h.1 == "text/html");
    for (headers, r, cache, n) in answers.iter() {
        let content_type = r.header("content-type").unwrap_or_default();
        assert_eq!(content_type.starts_with("text/html"), is_html(headers), "answer {n}: {content_type}");
        if let Some(port) = d.search_port() {
            // The origin's own bytes, uncached, for the same request.
            let direct = svcdir_testkit::http::request(port, "GET", target, headers);
            assert_eq!(r.body, direct.body, "answer {n} ({cache:?}) differs from svcdir-search's");
            // The first answer for each Accept is a miss, every later one a hit.
            let first = answers[..*n].iter().all(|(h, ..)| h != headers);
            if d.kind != crate::support::Kind::Preview {
                assert_eq!(cache.as_deref(), Some(if first { "MISS" } else { "HIT" }), "answer {n}");
            }
        }
    }
    // `format` beats Accept, cached or not.
    for _ in 0..2 {
        let by_format = d.send("GET", &format!("{target}&format=json"), &html);
        assert!(by_format.header("content-type").unwrap_or_default().starts_with("application/json"));
        if let Some(port) = d.search_port() {
            let direct = svcdir_testkit::http::request(port, "GET", &format!("{target}&format=json"), &html);
            assert_eq!(by_format.body, direct.body);
        }
    }
}

/// A repeated search is not asked of svcdir-search again while its answer is cached (nginx's
/// `proxy_cache`; the Worker's Cache API, through workerd's cache service): counted in
/// svcdir-search's access log, one line per request it answered.
pub fn repeated_searches_do_not_reach_the_origin(d: &Deployment) {
    if d.search_port().is_none() {
        return; // the preview answers searches itself: there is no origin to spare
    }
    // Queries no other case asks, so that each starts uncached.
    let query = "postcode=G2+1AL&radius=4322&page_size=2";
    let hits_before = d.search_cache.as_ref().map(|c| c.counts.hits.load(std::sync::atomic::Ordering::SeqCst));
    for (accept, content_type) in [("application/json", "application/json"), ("text/html", "text/html")] {
        for _ in 0..3 {
            let r = d.send("GET", &format!("/api/v4/services/?{query}"), &[("accept", accept)]);
            assert_eq!(r.status, 200, "{}", r.text());
            assert!(r.header("content-type").unwrap_or_default().starts_with(content_type), "{accept}");
        }
    }
    // svcdir-search queues a request's log line before it answers, and one thread writes the
    // lines in order: once a later request's line is written, every earlier one is.
    let sentinel = "postcode=G2+1AL&radius=4323&page_size=2";
    assert_eq!(d.get(&format!("/api/v4/services/?{sentinel}")).status, 200);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !d.svcdir_log().contains(sentinel) {
        assert!(std::time::Instant::now() < deadline, "no log line for the sentinel:\n{}", d.svcdir_log());
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let log = d.svcdir_log();
    let asked = log.lines().filter(|line| line.contains(query)).count();
    assert_eq!(asked, 2, "six searches in two formats reached svcdir-search {asked} times:\n{log}");
    if let (Some(cache), Some(before)) = (&d.search_cache, hits_before) {
        let hits = cache.counts.hits.load(std::sync::atomic::Ordering::SeqCst) - before;
        assert!(hits >= 4, "the Worker's cache answered {hits} of the four repeats");
    }
}

/// Any other method: 405 with `Allow` and a JSON body, on static and search paths.
pub fn other_methods_are_405(d: &Deployment) {
    for method in ["POST", "PUT", "DELETE", "PATCH", "TRACE", "PROPFIND"] {
        for target in [
            "/api/v4/categories/",
            "/api/v4/services/befriending-line/",
            "/api/v4/services/no-such-service/",
            "/api/v4/import/?page=0",
            "/api/v4/services/?postcode=G2+1AL",
            "/api/v3/search",
        ] {
            let what = format!("{method} {target}");
            let json = assert_json(&d.send(method, target, &[]), 405, &what);
            assert_eq!(json, serde_json::json!({"detail": format!("Method \"{method}\" not allowed.")}), "{what}");
        }
    }
    let html = assert_html(&d.send("DELETE", "/api/v4/categories/", &[("accept", BROWSER)]), 405, "DELETE, HTML");
    assert!(html.contains("Method &quot;DELETE&quot; not allowed."), "{html}");
}

/// Unknown paths, ids and slugs: 404 `Not found.`, or its HTML view. The URL is checked
/// before the method, so POST is 404 too, except on an unknown key of a known pattern (405).
/// `/healthz` and `/metrics` are svcdir-search's operator paths: never routed to it, so
/// the public side answers them as any unknown path (issue 14).
pub fn operator_paths_are_not_served(d: &Deployment) {
    let not_found = serde_json::json!({"detail": "Not found."});
    for target in ["/healthz", "/healthz/", "/metrics", "/metrics/", "/api/v4/services/healthz"] {
        let r = d.get(target);
        assert_eq!(assert_json(&r, 404, target), not_found, "{target}");
        assert!(!r.text().contains("index_hash") && !r.text().contains("# TYPE"), "{target}");
    }
}

pub fn unknown_paths_ids_and_slugs_are_404(d: &Deployment) {
    let not_found = serde_json::json!({"detail": "Not found."});
    for (target, post) in [
        // `/` and `/api/` are the API root (issue 26); the version folders are not.
        ("/api/v3/", 404),
        ("/api/v4/", 404),
        ("/api/v5/categories/", 404),
        ("/api/v4/services/00000000-0000-4000-8000-000000000000/", 405),
        ("/api/v4/services/no-such-service", 405),
        ("/api/v4/organisations/00000000-0000-4000-8000-000000000000", 405),
        ("/api/v4/organisations/no-such-organisation/", 405),
        ("/api/v4/services/5e000000-0000-4000-8000-000000000006/", 405),
        ("/api/v4/services/befriending-line/extra", 404),
        ("/api/v4/services/Befriending-Line/", 404),
        ("/api/v4/locations/", 404),
        ("/api/v3/services/befriending-line/", 404),
        ("/favicon.ico", 404),
    ] {
        assert_eq!(assert_json(&d.get(target), 404, target), not_found, "{target}");
        let html = assert_html(&d.send("GET", target, &[("accept", BROWSER)]), 404, target);
        assert!(html.contains("Not found."), "{target}");
        assert_eq!(d.send("POST", target, &[]).status, post, "POST {target}");
    }
    // Keys longer than any id or slug (routing::MAX_KEY_LEN), past the file system's name
    // limit too: not found, as JSON or HTML, with the usual headers (issue 28).
    let long = "a".repeat(300);
    for target in [
        format!("/api/v4/services/{long}"),
        format!("/api/v4/organisations/{long}/"),
        format!("/openreferral/services/{long}"),
    ] {
        assert_eq!(assert_json(&d.get(&target), 404, &target), not_found, "{target}");
        let html = assert_html(&d.send("GET", &target, &[("accept", BROWSER)]), 404, &target);
        assert!(html.contains("Not found."), "{target}");
    }
}

/// The internal folders of public/ are not reachable directly.
pub fn internal_folders_are_not_reachable(d: &Deployment) {
    for target in [
        "/_errors/",
        "/_errors/404.json",
        "/_errors/404.html",
        "/api/v4/import/page/",
        "/api/v4/import/page/2/",
        "/api/v4/import/page/2",
        "/api/v4/import/page/2/index.json",
        "/api/v4/categories/index.json",
        "/api/v4/categories/index.html",
        "/api/v4/services/befriending-line/index.json",
        "/_svcdir/405.json",
        "/_svcdir/options.json",
        "/_manifest.json",
        "/_search/",
        "/_search/current.json",
        "/.public.gens/",
    ] {
        assert_eq!(assert_json(&d.get(target), 404, target)["detail"], "Not found.", "{target}");
    }
    // The published search index, at the path its pointer gives: for the search servers only.
    let pointer: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.build.public.join("_search/current.json")).unwrap()).unwrap();
    let index = format!("/{}", pointer["path"].as_str().unwrap());
    assert!(d.build.public.join(&index[1..]).is_file(), "{index} is in the tree");
    assert_eq!(assert_json(&d.get(&index), 404, &index)["detail"], "Not found.", "{index}");
}

/// Nothing outside public/ is served: traversal in every spelling is refused (400, as nginx
/// refuses it) or lands inside the URL space (404).
pub fn nothing_outside_public_is_served(d: &Deployment) {
    // A file right beside public/, in the build's temporary folder.
    let secret = d.build.dir().join("secret.json");
    std::fs::write(&secret, b"{\"secret\":true}").unwrap();
    for target in [
        "/../secret.json",
        "/api/../../secret.json",
        "/api/v4/services/../../../../secret.json",
        "/api/v4/services/..%2f..%2f..%2f..%2fsecret.json",
        "/api/v4/services/%2e%2e/%2e%2e/%2e%2e/%2e%2e/secret.json",
        "/api/v4/services/..%2f..%2f..%2fsecret.json",
        "/%2e%2e/secret.json",
        "/secret.json",
        "/api/v4/services/..",
        "/api/v4/import/?page=../../../secret",
        "/api/v4/import/?page=1/../../../../secret",
        "/api/v4/services/%00/",
        "/api/v4/services/%zz/",
        "/etc/passwd",
    ] {
        let r = d.get(target);
        assert!(matches!(r.status, 400 | 404), "{target}: {}", r.status);
        assert!(!r.text().contains("secret"), "{target}: {}", r.text());
        assert_api_headers(&r, target);
    }
    assert_eq!(d.get("/../secret.json").json()["detail"], "Malformed request.");
}

/// JSON and HTML are gzipped for a client that accepts it.
pub fn json_and_html_are_gzipped(d: &Deployment) {
    for (target, accept) in [
        ("/api/v4/service-areas/", "application/json"),
        ("/api/v4/import/", BROWSER),
        ("/api/v4/services/?postcode=G2+1AL", "*/*"),
    ] {
        let r = d.send("GET", target, &[("accept-encoding", "gzip"), ("accept", accept)]);
        assert_eq!(r.status, 200, "{target}");
        assert_eq!(r.header("content-encoding"), Some("gzip"), "{target}: {:?}", r.headers);
        assert_eq!(r.body.get(..2), Some(&[0x1f, 0x8b][..]), "{target}: gzip magic");
        assert!(r.header_list("vary").iter().any(|v| v.eq_ignore_ascii_case("accept-encoding")), "{target}");
        let plain = d.send("GET", target, &[("accept", accept)]);
        assert!(plain.header("content-encoding").is_none(), "{target}");
    }
}

/// Requests of every kind get exactly the answer `svcdir::api::routing::route` decides (the
/// file's bytes, the fixed bodies), and search paths the in-process search server's answer.
pub fn answers_agree_with_the_routing_rules(d: &Deployment) {
    let index = svcdir::index::SearchIndex::read(&d.build.index).expect("index");
    let search_app = svcdir::server::app(std::sync::Arc::new(svcdir::server::AppState::new(index)));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let targets = [
        "/api/v4/categories",
        "/api/v4/categories/?format=api",
        "/api/v4/categories/?format=json&format=api",
        "/api/v4/categories/?format=a%70i",
        "/api/v4/categories/?format=",
        "/api/v4/categories/?format=JSON",
        "/api/v3/service-areas/?page=9",
        "/api/v4/services/befriending-line",
        "/api/v4/services/5e000000-0000-4000-8000-000000000002/?format=api",
        "/api/v4/services/nope/",
        "/api/v4/organisations/cafe-comhla?x=1",
        "/api/v4/import",
        "/api/v4/import/?page=2",
        "/api/v4/import/?page=%2B2",
        "/api/v4/import/?page=+2+",
        "/api/v4/import/?page=002&format=api",
        "/api/v4/import/?page=1&page=3",
        "/api/v4/import/?page=3&page=x",
        "/api/v4/import/?page",
        "/api/v4/import/?page=4",
        "/api/v4/import/?page=0",
        "//api//v4/./categories/",
        "/api/v4/service%2Dareas/",
        "/api/v4/services/x/../../categories",
        "/api/v4/services/%2e%2e/organisations/cafe-comhla",
        "/api/v4/service%73/?postcode=G2+1AL",
        "/api/v4/services/?postcode=G2+1AL&format=api",
        "/api/v4/services/?postcode=G2+1AL&page=2&page_size=1",
        "/api/v3/search?postcode=AB11+6BA&q=caf%C3%A9",
        "/api/v3/search/?postcode=nowhere",
        "/_errors/404.json",
        "/a/../../b",
        "/a%2",
        "/nope?format=api",
        "/openreferral",
        "/openreferral/openapi.json",
        "/openreferral/services/?page=2",
        "/openreferral/services?page=+2+&format=api",
        "/openreferral/services/?page=0",
        "/openreferral/services/?page=99",
        "/openreferral/taxonomy_terms/?page=1&page=2",
        "/openreferral/services/5e000000-0000-4000-8000-000000000002",
        "/openreferral/services/page/2/",
        "/openreferral/locations/",
        "/downloads/services.ndjson.gz",
        "/downloads/openreferral-uk.zip?format=api",
        "/downloads/services.ndjson",
        "/changes",
        "/changes/?page=1&format=api",
        "/changes/?page=2",
        "/changes/state.json",
        "/",
        "/api",
        "/api/?format=api",
        "/api/v4/",
    ];
    let accepts = ["", BROWSER, "*/*", "application/json, text/html;q=0.9"];
    let methods = ["GET", "HEAD", "OPTIONS", "POST"];
    for target in targets {
        for accept in accepts {
            for method in methods {
                let what = format!("{method} {target} Accept: {accept:?}");
                let headers: Vec<(&str, &str)> = if accept.is_empty() { vec![] } else { vec![("accept", accept)] };
                let got = d.send(method, target, &headers);
                let (status, content_type, body) = expected(d, &runtime, &search_app, method, target, accept);
                assert_eq!(got.status, status, "{what}: {}", got.text());
                assert_eq!(got.content_type(), content_type, "{what}");
                assert!(got.body == body, "{what}:\n got {}\nwant {}", got.text(), String::from_utf8_lossy(&body));
                assert_api_headers(&got, &what);
            }
        }
    }
}

/// What `routing::route` says a request gets, with the files of the build and the
/// in-process search server.
fn expected(
    d: &Deployment,
    runtime: &tokio::runtime::Runtime,
    search_app: &axum::Router,
    method: &str,
    target: &str,
    accept: &str,
) -> (u16, String, Vec<u8>) {
    use tower::ServiceExt;
    let method = Method::from_bytes(method.as_bytes()).unwrap();
    let (path, query) = target.split_once('?').map_or((target, None), |(p, q)| (p, Some(q)));
    let mut headers = HeaderMap::new();
    if !accept.is_empty() {
        headers.insert(HeaderName::from_static("accept"), HeaderValue::from_str(accept).unwrap());
    }
    let head = method == Method::HEAD;
    let strip = |body: Vec<u8>| if head { Vec::new() } else { body };
    let content_type = |format: Format| match format {
        Format::Json => JSON.to_owned(),
        Format::Html => HTML.to_owned(),
    };
    let ext = |format: Format| match format {
        Format::Json => "json",
        Format::Html => "html",
    };
    let answer = match routing::route(&method, path, query, &headers) {
        Route::Search(path) => {
            let uri = match query {
                Some(q) => format!("{path}?{q}"),
                None => path,
            };
            let mut request = axum::http::Request::builder().method(method.clone()).uri(uri);
            *request.headers_mut().unwrap() = headers;
            let response =
                runtime.block_on(search_app.clone().oneshot(request.body(axum::body::Body::empty()).unwrap())).unwrap();
            let status = response.status().as_u16();
            let content_type = response.headers()[axum::http::header::CONTENT_TYPE].to_str().unwrap().to_owned();
            let body = runtime.block_on(axum::body::to_bytes(response.into_body(), usize::MAX)).unwrap();
            return (status, content_type, strip(body.to_vec()));
        }
        Route::Static(answer) => answer,
    };
    let format = answer.format();
    let not_found = || (404, content_type(format), d.build.file(&format!("_errors/404.{}", ext(format))));
    let invalid_page = || (404, content_type(format), bodies::invalid_page_body(format).unwrap());
    let (status, content_type, body) = match &answer {
        Answer::File { path, missing, .. } => {
            if d.build.public.join(path).is_file() {
                (200, content_type(format), d.build.file(path))
            } else if *missing == Missing::NotFound {
                not_found()
            } else {
                invalid_page()
            }
        }
        Answer::NotFound(_) => not_found(),
        Answer::InvalidPage(_) => invalid_page(),
        Answer::MethodNotAllowed(_) => {
            let template = bodies::method_not_allowed_body(format).unwrap();
            (405, content_type(format), bodies::method_not_allowed_for(&template, format, &method))
        }
        Answer::Options(_) => (200, content_type(format), Vec::new()),
        Answer::Download { path, content_type: ty } => {
            if d.build.public.join(path).is_file() {
                (200, (*ty).to_owned(), d.build.file(path))
            } else {
                not_found()
            }
        }
        Answer::BadRequest => (400, JSON.to_owned(), bodies::bad_request_body()),
    };
    (status, content_type, strip(body))
}

/// The OpenAPI document at `/api/openapi.json` and `/api/openapi[/]`, and its HTML
/// reference page for a browser or `format=api` (issue 7).
pub fn openapi_document_and_page_are_served(d: &Deployment) {
    let file = d.build.file("api/openapi.json");
    for target in ["/api/openapi.json", "/api/openapi/", "/api/openapi", "/api/openapi.json?format=json"] {
        let r = d.get(target);
        let doc = assert_json(&r, 200, target);
        assert_api_headers(&r, target);
        assert!(r.body == file, "{target}: not the bytes of api/openapi.json");
        assert_eq!(doc["servers"][0]["url"], BASE_URL, "{target}");
    }
    for (target, accept) in [("/api/openapi/", BROWSER), ("/api/openapi.json?format=api", "*/*")] {
        let page = assert_html(&d.send("GET", target, &[("accept", accept)]), 200, target);
        assert!(page.contains("API reference") && !page.contains("<script"), "{target}");
    }
    assert_json(&d.get("/api/openapi/x"), 404, "/api/openapi/x");
    assert_json(&d.get("/api/openapi.yaml"), 404, "/api/openapi.yaml");
}

/// The Open Referral UK API (issue 17): the root, every list page by `?page=N` with the
/// bytes of its file, every object of every list by id, and invalid pages 404.
pub fn open_referral_lists_and_objects_are_served(d: &Deployment) {
    let root = assert_json(&d.get("/openreferral/"), 200, "ORUK root");
    assert_eq!(root["version"], "HSDS-UK-3.0");
    assert_eq!(root["profile"], "https://github.com/OpenReferralUK/uk-profile");
    assert_eq!(root["openapi_url"], format!("{BASE_URL}/openreferral/openapi.json"));
    let doc = assert_json(&d.get("/openreferral/openapi.json"), 200, "ORUK OpenAPI");
    assert_eq!(doc["servers"][0]["url"], format!("{BASE_URL}/openreferral"));
    let mut objects = 0;
    for list in ["services", "service_at_locations", "organizations", "taxonomies", "taxonomy_terms"] {
        let first = assert_json(&d.get(&format!("/openreferral/{list}")), 200, list);
        assert_eq!(d.get(&format!("/openreferral/{list}/?page=1")).body, d.get(&format!("/openreferral/{list}/")).body);
        let pages = first["total_pages"].as_u64().unwrap();
        let mut ids = Vec::new();
        for n in 1..=pages {
            let target = format!("/openreferral/{list}/?page={n}");
            let r = d.get(&target);
            let page = assert_json(&r, 200, &target);
            assert_eq!(r.body, d.build.file(&format!("openreferral/{list}/page/{n}/index.json")), "{target}");
            assert_eq!(page["page_number"], n);
            ids.extend(page["contents"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap().to_owned()));
        }
        assert_eq!(ids.len() as u64, first["total_items"].as_u64().unwrap(), "{list}");
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(ids, sorted, "{list} in id order");
        for id in &ids {
            let target = format!("/openreferral/{list}/{id}");
            let object = assert_json(&d.get(&target), 200, &target);
            assert_eq!(object["id"], id.as_str());
            objects += 1;
        }
        let last = d.get(&format!("/openreferral/{list}/?page=last"));
        assert_eq!(last.body, d.get(&format!("/openreferral/{list}/?page={pages}")).body, "{list} page=last");
        let past = format!("/openreferral/{list}/?page={}", pages + 1);
        assert_eq!(assert_json(&d.get(&past), 404, &past), serde_json::json!({"detail": "Invalid page."}));
        let zero = format!("/openreferral/{list}/?page=0");
        assert_eq!(assert_json(&d.get(&zero), 404, &zero), serde_json::json!({"detail": "Invalid page."}));
        assert_html(&d.get(&format!("/openreferral/{list}/?format=api&page=1")), 200, list);
    }
    assert!(objects > 10, "{objects}");
    assert!(d.build.json("openreferral/services/index.json")["total_pages"].as_u64().unwrap() >= 2);
}

/// The bulk downloads (issue 17): their bytes as they are, `application/gzip` and
/// `application/zip`, never encoded again whatever `Accept-Encoding` says; no other name.
pub fn downloads_are_served_as_they_are(d: &Deployment) {
    for (path, content_type) in [
        ("downloads/services.ndjson.gz", "application/gzip"),
        ("downloads/openreferral-uk.zip", "application/zip"),
        ("downloads/locations.geojson", "application/geo+json"),
    ] {
        let target = format!("/{path}");
        let r = d.send("GET", &target, &[("accept-encoding", "gzip, br"), ("accept", BROWSER)]);
        assert_eq!(r.status, 200, "{target}");
        assert_eq!(r.content_type(), content_type, "{target}");
        assert_eq!(r.header("content-encoding"), None, "{target}: not encoded again");
        assert!(r.body == d.build.file(path), "{target}: the file's bytes");
        assert_api_headers(&r, &target);
        let head = d.send("HEAD", &target, &[]);
        assert_eq!((head.status, head.body.len()), (200, 0), "HEAD {target}");
        assert_eq!(d.send("POST", &target, &[]).status, 405, "POST {target}");
    }
    // Not a precompressed variant: the name without .gz is no file of the API.
    assert_json(&d.get("/downloads/services.ndjson"), 404, "no services.ndjson");
    assert_json(&d.get("/downloads/"), 404, "no listing");
}

/// The change record (issue 17): `/changes/` and `?page=1` are the same page, the newest
/// entry names the state that `/changes/state.json` holds, a page past the end is invalid.
pub fn change_record_is_served(d: &Deployment) {
    let first = assert_json(&d.get("/changes/"), 200, "changes");
    assert_eq!(d.get("/changes?page=1").body, d.get("/changes/").body);
    assert_eq!(d.get("/changes/").body, d.build.file("changes/index.json"));
    let state = assert_json(&d.get("/changes/state.json"), 200, "state");
    assert_eq!(state["build"], first["builds"][0]["id"]);
    assert!(state["services"].as_object().is_some_and(|m| !m.is_empty()));
    let past = assert_json(&d.get("/changes/?page=2"), 404, "changes page 2");
    assert_eq!(past, serde_json::json!({"detail": "Invalid page."}));
}

/// The API root (issue 26): `/`, `/api` and `/api/` answer `{meta, data}`, the bytes of
/// `api/index.json`, `meta` as the import's and `data` absolute URLs that each answer 200
/// (the two searches 400 without a postcode and 200 with one); its HTML view is the front
/// page with the search form; `/api/v4/` and `/api/v3/` stay 404.
pub fn api_root_answers_at_slash_and_api(d: &Deployment) {
    let file = d.build.file("api/index.json");
    for target in ["/", "/api", "/api/", "/?format=json", "/api/?format=json"] {
        let r = d.get(target);
        let root = assert_json(&r, 200, target);
        assert!(r.body == file, "{target}: not the bytes of api/index.json");
        assert_eq!(r.header("cache-control"), Some(headers::cache_control(Origin::Static, StatusCode::OK)));
        assert_eq!(root["meta"], d.get("/api/v4/import/").json()["meta"], "{target}: meta as the import's");
    }
    let root = d.get("/").json();
    let data = root["data"].as_object().expect("data is an object");
    assert!(data.len() >= 12, "{data:?}");
    for (key, url) in data {
        let url = url.as_str().unwrap_or_else(|| panic!("{key}: not a string"));
        assert!(url.starts_with(&format!("{BASE_URL}/")) && !url.contains('{'), "{key}: {url}");
        let r = d.follow(url);
        if key.starts_with("search") {
            assert_eq!(r.status, 400, "{key}: {url} needs a postcode");
            let sep = if url.contains('?') { '&' } else { '?' };
            assert_eq!(d.follow(&format!("{url}{sep}postcode=G2+1AL")).status, 200, "{key}");
        } else {
            assert_eq!(r.status, 200, "{key}: {url}: {}", r.text());
        }
    }
    let page = d.build.file("api/index.html");
    for (target, accept) in [("/", BROWSER), ("/api/", BROWSER), ("/api?format=api", "*/*")] {
        let r = d.send("GET", target, &[("accept", accept)]);
        let html = assert_html(&r, 200, target);
        assert!(r.body == page, "{target}: not the bytes of api/index.html");
        for text in
            ["<form method=\"get\" action=\"/api/v4/services/\"", "Licence and attribution", "This response as JSON"]
        {
            assert!(html.contains(text), "{target}: no {text:?}");
        }
    }
    let head = d.send("HEAD", "/", &[]);
    assert_eq!((head.status, head.body.len(), head.content_type()), (200, 0, JSON));
    assert_api_headers(&head, "HEAD /");
    let options = d.send("OPTIONS", "/api", &[]);
    assert_eq!((options.status, options.body.len()), (200, 0));
    assert_eq!(d.send("POST", "/", &[]).status, 405);
    for target in ["/api/v4/", "/api/v3/", "/api/v4", "/api/v3", "/index.json", "/api/index.json"] {
        let json = assert_json(&d.get(target), 404, target);
        assert_eq!(json, serde_json::json!({"detail": "Not found."}), "{target}");
    }
    assert_html(&d.send("GET", "/api/v4/", &[("accept", BROWSER)]), 404, "/api/v4/ in a browser");
}

/// The search's HTML view carries the form filled in with the query, and a bad field's
/// message beside it on the 400 (issue 26).
pub fn search_html_views_carry_the_form(d: &Deployment) {
    let html = assert_html(&d.get("/api/v4/services/?postcode=g2+1al&radius=3000&format=api"), 200, "v4 search");
    for text in
        ["action=\"/api/v4/services/\"", "name=\"postcode\" value=\"g2 1al\"", "value=\"3000\"", "name=\"page_size\""]
    {
        assert!(html.contains(text), "v4: no {text:?}");
    }
    let v3 = assert_html(&d.get("/api/v3/search/?postcode=G2+1AL&format=api"), 200, "v3 search");
    assert!(v3.contains("action=\"/api/v3/search/\"") && !v3.contains("page_size"), "v3 form");
    let bad = assert_html(&d.get("/api/v4/services/?postcode=G2+1AL&radius=far&format=api"), 400, "bad radius");
    assert!(bad.contains("<span class=\"error\" id=\"radius-error\">A valid integer is required.</span>"), "{bad}");
    assert!(bad.contains("name=\"radius\" value=\"far\""), "the bad value is kept");
}

/// Every page of a listing, followed by its `next` links from `first` (a path): its `count`
/// and its ids in order; each `previous` leads back.
fn listing_ids(d: &Deployment, first: &str) -> (u64, Vec<String>) {
    let mut page = assert_json(&d.get(first), 200, first);
    let count = page["count"].as_u64().expect("count");
    assert!(page["previous"].is_null(), "{first}");
    assert_eq!(page["meta"]["attribution"].as_array().map(Vec::len), Some(4), "{first}");
    let mut ids = Vec::new();
    let mut n = 1;
    loop {
        ids.extend(page["data"].as_array().expect("data").iter().map(|s| s["id"].as_str().unwrap().to_owned()));
        let Some(next) = page["next"].as_str().map(str::to_owned) else {
            break;
        };
        n += 1;
        assert_eq!(next, format!("{BASE_URL}{first}?format=json&page={n}"));
        page = assert_json(&d.follow(&next), 200, &next);
        let back = d.follow(page["previous"].as_str().expect("previous")).json();
        assert_eq!(back["next"].as_str(), Some(next.as_str()));
    }
    (count, ids)
}

/// The listings without a postcode (issue 25): for every category (itself and everything
/// below it) and every service area, the services of the import that belong, in id order,
/// page by page as the import; `page=last`, the 404s and the HTML view as for the import.
pub fn listings_are_paged_as_the_import(d: &Deployment) {
    let mut import = Vec::new();
    let mut page = d.get("/api/v4/import/").json();
    loop {
        import.extend(page["data"].as_array().unwrap().iter().cloned());
        match page["next"].as_str().map(str::to_owned) {
            Some(next) => page = d.follow(&next).json(),
            None => break,
        }
    }
    // Each category slug with the slugs of its subtree.
    fn subtrees(nodes: &[Value], out: &mut Vec<(String, Vec<String>)>) -> Vec<String> {
        let mut all = Vec::new();
        for node in nodes {
            let at = out.len();
            out.push((node["slug"].as_str().unwrap().to_owned(), Vec::new()));
            let mut below = subtrees(node["sub_categories"].as_array().unwrap(), out);
            below.push(out[at].0.clone());
            out[at].1 = below.clone();
            all.extend(below);
        }
        all
    }
    let mut categories = Vec::new();
    subtrees(d.get("/api/v4/categories/").json()["data"].as_array().unwrap(), &mut categories);
    let tagged = |s: &Value, slugs: &[String]| {
        s["categories"].as_array().unwrap().iter().any(|c| slugs.iter().any(|x| x == c["slug"].as_str().unwrap()))
    };
    let mut empty = 0;
    for (slug, subtree) in &categories {
        let want: Vec<String> =
            import.iter().filter(|s| tagged(s, subtree)).map(|s| s["id"].as_str().unwrap().to_owned()).collect();
        let path = format!("/api/v4/categories/{slug}/services/");
        assert_eq!(listing_ids(d, &path), (want.len() as u64, want.clone()), "{path}");
        empty += usize::from(want.is_empty());
    }
    for area in d.get("/api/v4/service-areas/").json()["data"].as_array().unwrap() {
        let code = area["code"].as_str().unwrap();
        let want: Vec<String> = import
            .iter()
            .filter(|s| s["service_areas"].as_array().unwrap().iter().any(|a| a["code"] == code))
            .map(|s| s["id"].as_str().unwrap().to_owned())
            .collect();
        let path = format!("/api/v4/service-areas/{code}/services/");
        assert_eq!(listing_ids(d, &path), (want.len() as u64, want.clone()), "{path}");
        empty += usize::from(want.is_empty());
    }
    assert!(empty > 0, "the fixture has empty listings (one empty page each)");

    // Paging as the import: with and without the slash, page=last, invalid pages (the
    // fixture's longest listing fills its page; the unit tests of `svcdir::listings` and
    // tests/it's listings test follow the `next` links of longer ones).
    let (slug, _) = categories
        .iter()
        .max_by_key(|(_, subtree)| import.iter().filter(|s| tagged(s, subtree)).count())
        .expect("a category");
    let path = format!("/api/v4/categories/{slug}/services");
    assert_eq!(d.get(&path).body, d.get(&format!("{path}/?format=json&page=1")).body);
    let first = d.get(&path).json();
    let pages = first["count"].as_u64().unwrap().div_ceil(2);
    let numbered = d.get(&format!("{path}/?format=json&page={pages}"));
    for target in [format!("{path}/?page=last"), format!("{path}?format=json&page=l%61st")] {
        assert_eq!(assert_json(&d.get(&target), 200, &target), numbered.json(), "{target}");
    }
    for page in ["0", "two", &(pages + 1).to_string(), "LAST"] {
        let target = format!("{path}/?format=json&page={page}");
        assert_eq!(assert_json(&d.get(&target), 404, &target), serde_json::json!({"detail": "Invalid page."}));
    }
    let html = assert_html(&d.get(&format!("{path}/?format=api&page={pages}")), 200, "listing, HTML");
    assert!(html.contains(&first["data"][0]["name"].as_str().unwrap().replace('&', "&amp;")), "{html}");
    assert!(assert_html(&d.get(&format!("{path}/?format=api&page=0")), 404, "HTML").contains("Invalid page."));
    assert_html(&d.send("GET", &format!("{path}/"), &[("accept", BROWSER)]), 200, "listing, browser");

    // Unknown keys, and a code in the wrong case, are not found.
    for target in [
        "/api/v4/categories/no-such-category/services/",
        "/api/v4/categories/no-such-category/services",
        "/api/v4/service-areas/S99999999/services/",
        "/api/v4/service-areas/s12000046/services/",
        "/api/v4/service-areas/S12000046/services/x/",
        "/api/v3/categories/foodbank/services/",
    ] {
        assert_eq!(assert_json(&d.get(target), 404, target), serde_json::json!({"detail": "Not found."}), "{target}");
    }
}
