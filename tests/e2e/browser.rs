//! Headless Chromium opens the HTML views that `svcdir serve` gives a browser (by its own
//! `Accept` header, no `format=api`) and the test checks what a person sees: names,
//! addresses, links that work, and the markup planted in `tests/fixtures/xss` shown as text,
//! never run. Screenshots go to `target/screenshots/`. Skipped, saying so, without Chromium;
//! `.ci/run` installs Debian's `chromium`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::{self, Build, Deployment};

fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"].into_iter().map(PathBuf::from).find(|p| p.is_file())
}

/// Runs Chromium headless with a fresh profile; gives stdout. Killed after 60 s.
fn run_chromium(chromium: &Path, args: &[String]) -> String {
    let profile = tempfile::Builder::new().prefix("svcdir-chromium-").tempdir().expect("temp dir");
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium {args:?} did not finish in 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().expect("chromium output");
    assert!(output.status.success(), "chromium {args:?} failed:\n{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// One page as the browser shows it.
struct Seen {
    name: &'static str,
    dom: String,
}

impl Seen {
    fn assert_contains(&self, text: &str) {
        assert!(self.dom.contains(text), "{}: the page does not show {text:?}:\n{}", self.name, self.dom);
    }

    /// No element or attribute came from the data: the template has no script, image or
    /// frame, its only SVG is the map, and in a serialised DOM a `<` of text is always `&lt;`.
    fn assert_nothing_injected(&self) {
        for tag in ["<script", "<img", "<iframe", "<b ", "href=\"javascript:"] {
            assert!(!self.dom.to_ascii_lowercase().contains(tag), "{}: {tag} in the DOM:\n{}", self.name, self.dom);
        }
        let svgs = self.dom.to_ascii_lowercase().matches("<svg").count();
        assert_eq!(svgs, self.dom.matches("<svg class=\"map\"").count(), "{}: an SVG that is no map", self.name);
        let title = self.dom.split("<title>").nth(1).and_then(|t| t.split("</title>").next()).unwrap_or("");
        // A payload that ran would have set the whole title to "XSS-...".
        assert!(title.ends_with(" · Service Directory API"), "{}: title {title:?}", self.name);
    }

    /// Every `href` of the page, `&amp;` decoded.
    fn links(&self) -> Vec<String> {
        self.dom
            .split("href=\"")
            .skip(1)
            .filter_map(|rest| rest.split('"').next())
            .map(|href| href.replace("&amp;", "&"))
            .collect()
    }
}

#[test]
fn html_views_show_the_data_as_text_in_a_browser() {
    let Some(chromium) = chromium() else {
        svcdir::test_support::skipped("chromium is not installed (.ci/run installs it)");
        return;
    };
    // Built with the preview's own origin, so the links in the pages lead back to it: the
    // port comes first (picked, and picked again if taken before the preview binds it).
    let d = support::retry_port(|port| {
        support::start_preview_on(Arc::new(Build::new("xss", &format!("http://127.0.0.1:{port}"))), port)
    });
    let origin = d.origin();
    let organisation = "2c5f3b8e-1d44-4c1a-9f0e-6a7b8c9d0e1f";
    let pages: [(&'static str, String); 6] = [
        ("service", "/api/v4/services/city-centre-foodbank/".into()),
        ("organisation", format!("/api/v4/organisations/{organisation}")),
        ("categories", "/api/v4/categories/".into()),
        ("service-areas", "/api/v4/service-areas".into()),
        ("search", "/api/v4/services/?postcode=G2+1AL&page_size=2".into()),
        ("import", "/api/v4/import/".into()),
    ];
    let shots = support::repo().join("target/screenshots");
    std::fs::create_dir_all(&shots).expect("target/screenshots");

    let seen: Vec<Seen> = std::thread::scope(|scope| {
        let handles: Vec<_> = pages
            .iter()
            .map(|(name, target)| {
                let (chromium, url, shots) = (&chromium, format!("{origin}{target}"), &shots);
                scope.spawn(move || {
                    let dom = run_chromium(chromium, &["--dump-dom".into(), url.clone()]);
                    let png = shots.join(format!("{name}.png"));
                    let _ = std::fs::remove_file(&png);
                    run_chromium(
                        chromium,
                        &[format!("--screenshot={}", png.display()), "--window-size=1280,2000".into(), url],
                    );
                    let bytes = std::fs::read(&png).unwrap_or_else(|e| panic!("{}: {e}", png.display()));
                    assert!(bytes.starts_with(b"\x89PNG"), "{} is not a PNG", png.display());
                    Seen { name, dom }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("page thread")).collect()
    });

    for page in &seen {
        page.assert_nothing_injected();
        page.assert_contains("This response as JSON");
        follow_links(&d, &origin, page);
    }
    let [service, organisation, categories, areas, search, import] = &seen[..] else { unreachable!() };

    // The planted markup, shown as text (the DOM serialises a text "<" as "&lt;").
    let script = "&lt;script&gt;document.title='XSS-script'&lt;/script&gt;City Centre Foodbank";
    let img = "&lt;img src=x onerror=\"document.title='XSS-img'\"&gt;Emergency food parcels.";
    let svg = "\"&gt;&lt;svg onload=\"document.title='XSS-svg'\"&gt;Glasgow Foodbank Network";
    let iframe = "&lt;iframe src=\"javascript:document.title='XSS-iframe'\"&gt;&lt;/iframe&gt;Community Hall, 12 High Street, Glasgow, G2 1AL";
    for text in [script, img, svg, iframe, "1 Argyle Street, Glasgow, G2 8AE", "0141 111 1111"] {
        service.assert_contains(text);
    }
    service.assert_contains("<h1>&lt;script&gt;document.title='XSS-script'&lt;/script&gt;City Centre Foodbank</h1>");
    for text in [svg, "javascript:document.title='XSS-href'", "Glasgow Befriending Line", "12 High Street"] {
        organisation.assert_contains(text);
    }
    for text in
        ["&lt;b onmouseover=\"document.title='XSS-category'\"&gt;Foodbank&lt;/b&gt;", "Mental Health Issues", "anxiety"]
    {
        categories.assert_contains(text);
    }
    for text in ["Glasgow City", "Greater Glasgow and Clyde", "Integration Authority (HSCP)", "Scotland"] {
        areas.assert_contains(text);
    }
    for text in [script, "HTTP 200 OK", "rel=\"next\"", "G2 1AL"] {
        search.assert_contains(text);
    }
    import.assert_contains("rel=\"next\"");
}

/// The links a person would follow on a page: every link into the API answers 200, and
/// "This response as JSON" gives the JSON.
fn follow_links(d: &Deployment, origin: &str, page: &Seen) {
    let links = page.links();
    let mut followed = 0;
    for href in &links {
        let target = href.strip_prefix(origin).unwrap_or(href);
        if !target.starts_with("/api/") {
            continue;
        }
        let r = d.get(target);
        // The searches' own links (on the front page) need a postcode: 400 without one.
        let path = target.split('?').next().unwrap_or(target).trim_end_matches('/');
        let status =
            if svcdir::api::routes::SEARCH_PATHS.contains(&path) && !target.contains("postcode=") { 400 } else { 200 };
        assert_eq!(r.status, status, "{}: link {href} is broken: {}", page.name, r.text());
        if target.contains("format=json") {
            r.json();
        }
        followed += 1;
    }
    assert!(followed >= 1, "{}: no API link in {links:?}", page.name);
}

/// A form as the browser's DOM holds it: its action, and each control's name and value in
/// tree order (what a GET submission sends).
#[derive(Debug)]
struct Form {
    action: String,
    controls: Vec<(String, String)>,
}

impl Form {
    /// The first `<form>` of a serialised DOM. Its values here are plain text (no `&`),
    /// which the test asserts rather than decodes.
    fn parse(dom: &str) -> Form {
        let start = dom.find("<form").expect("a form on the page");
        let form = &dom[start..start + dom[start..].find("</form>").expect("a closed form")];
        let attr = |tag: &str, name: &str| -> Option<String> {
            let key = format!(" {name}=\"");
            let at = tag.find(&key)? + key.len();
            Some(tag[at..at + tag[at..].find('"')?].to_owned())
        };
        let action = attr(&form[..form.find('>').unwrap()], "action").expect("action");
        let mut controls = Vec::new();
        let mut rest = form;
        while let Some(at) = rest.find(['<']) {
            rest = &rest[at..];
            let tag = &rest[..rest.find('>').expect("a closed tag") + 1];
            if tag.starts_with("<input ") {
                controls.push((attr(tag, "name").expect("name"), attr(tag, "value").unwrap_or_default()));
            } else if tag.starts_with("<select ") {
                let body = &rest[..rest.find("</select>").expect("a closed select")];
                let options: Vec<&str> = body.split("<option").skip(1).collect();
                let chosen =
                    options.iter().find(|o| o[..o.find('>').unwrap()].contains(" selected")).or(options.first());
                let value = chosen.and_then(|o| attr(o, "value")).unwrap_or_default();
                controls.push((attr(tag, "name").expect("name"), value));
            }
            rest = &rest[1..];
        }
        assert!(controls.iter().all(|(n, v)| !n.contains('&') && !v.contains('&')), "{controls:?}");
        Form { action, controls }
    }

    fn set(&mut self, name: &str, value: &str) {
        let control = self.controls.iter_mut().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no {name}"));
        control.1 = value.to_owned();
    }

    /// The URL a browser goes to on submitting it: the action, `?`, and the controls
    /// `application/x-www-form-urlencoded` in tree order (HTML's form submission algorithm).
    fn url(&self) -> String {
        let mut query = form_urlencoded::Serializer::new(String::new());
        for (name, value) in &self.controls {
            query.append_pair(name, value);
        }
        format!("{}?{}", self.action, query.finish())
    }
}

/// `(number, title)` of every numbered marker of the page's map, read from the SVG.
fn markers(dom: &str) -> Vec<(usize, String)> {
    let svg = &dom[dom.find("<svg class=\"map\"").expect("a map")..];
    let svg = &svg[..svg.find("</svg>").expect("a closed map")];
    svg.split("<g><title>")
        .skip(1)
        .filter_map(|group| {
            let group = &group[..group.find("</g>")?];
            let title = &group[..group.find("</title>")?];
            let text = &group[group.find("<text")?..];
            let number = &text[text.find('>')? + 1..text.find("</text>")?];
            let number: usize = number.parse().unwrap_or_else(|_| panic!("marker text {number:?} is not a number"));
            Some((number, title.to_owned()))
        })
        .collect()
}

/// Issue 26: the front page's form, read from the page as the browser has it, with a
/// postcode filled in and submitted as a browser submits it, gives the search's HTML view;
/// its map numbers each located result by its place in the list; a bad postcode comes back
/// with its message beside the form. Screenshots: front page, search with its map, service.
#[test]
fn the_front_page_form_leads_to_a_search_and_its_map() {
    let Some(chromium) = chromium() else {
        svcdir::test_support::skipped("chromium is not installed (.ci/run installs it)");
        return;
    };
    // Built with the preview's own origin, so the form's action and links lead back to it.
    let d = support::retry_port(|port| {
        support::start_preview_on(Arc::new(Build::new("small", &format!("http://127.0.0.1:{port}"))), port)
    });
    let origin = d.origin();
    let dom = |url: &str| run_chromium(&chromium, &["--dump-dom".into(), url.to_owned()]);
    let shots = support::repo().join("target/screenshots");
    std::fs::create_dir_all(&shots).expect("target/screenshots");
    let shoot = |name: &str, url: &str| {
        let png = shots.join(format!("{name}.png"));
        let _ = std::fs::remove_file(&png);
        run_chromium(
            &chromium,
            &[format!("--screenshot={}", png.display()), "--window-size=1280,1600".into(), url.into()],
        );
        let bytes = std::fs::read(&png).unwrap_or_else(|e| panic!("{}: {e}", png.display()));
        assert!(bytes.starts_with(b"\x89PNG"), "{} is not a PNG", png.display());
    };

    let front = Seen { name: "front page", dom: dom(&format!("{origin}/")) };
    front.assert_nothing_injected();
    for text in ["<h1>Service Directory API</h1>", "Licence and attribution", "Contains contributions from ALISS users"]
    {
        front.assert_contains(text);
    }
    follow_links(&d, &origin, &front);
    shoot("front", &format!("{origin}/"));

    let mut form = Form::parse(&front.dom);
    assert_eq!(form.action, "/api/v4/services/");
    let names: Vec<&str> = form.controls.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["format", "postcode", "q", "category", "location_type", "radius", "page_size"]);
    form.set("postcode", "G2 1AL");
    let target = form.url();
    assert_eq!(target, "/api/v4/services/?format=api&postcode=G2+1AL&q=&category=&location_type=&radius=&page_size=");
    let search = Seen { name: "search", dom: dom(&format!("{origin}{target}")) };
    search.assert_nothing_injected();
    search.assert_contains("<h1>Service search</h1>");
    search.assert_contains("HTTP 200 OK");
    let again = Form::parse(&search.dom);
    assert_eq!(again.controls.iter().find(|(n, _)| n == "postcode").map(|(_, v)| v.as_str()), Some("G2 1AL"));
    shoot("search-map", &format!("{origin}{target}"));

    // The markers against the list: the same search's JSON, its results in page order.
    let json = d.get(&target.replace("format=api", "format=json")).json();
    let results = json["data"].as_array().expect("data");
    let expected: Vec<(usize, String)> = results
        .iter()
        .enumerate()
        .filter(|(_, r)| r["locations"].as_array().is_some_and(|l| !l.is_empty()))
        .map(|(n, r)| (n + 1, format!("{}. {}", n + 1, r["name"].as_str().unwrap())))
        .collect();
    assert!(expected.len() >= 2, "the fixture has located results near G2 1AL: {expected:?}");
    let mut seen = markers(&search.dom);
    seen.sort();
    assert_eq!(seen, expected, "one marker per located result, numbered by its place in the list");

    // A service of the page, with its own map.
    let slug = results.iter().find(|r| r["locations"].as_array().is_some_and(|l| !l.is_empty())).unwrap()["slug"]
        .as_str()
        .unwrap()
        .to_owned();
    let service_url = format!("{origin}/api/v4/services/{slug}/");
    let service = Seen { name: "service", dom: dom(&service_url) };
    service.assert_nothing_injected();
    assert!(!markers(&service.dom).is_empty(), "the service's locations on its map");
    shoot("service", &service_url);

    // A postcode that does not exist: the 400's HTML view, the form with the message.
    form.set("postcode", "ZZ9 9ZZ");
    let refused = Seen { name: "400", dom: dom(&format!("{origin}{}", form.url())) };
    refused.assert_contains("HTTP 400 Bad Request");
    refused.assert_contains(
        "<span class=\"error\" id=\"postcode-error\">Object with postcode=ZZ9 9ZZ does not exist.</span>",
    );
    assert_eq!(Form::parse(&refused.dom).controls, form.controls, "the form keeps what was sent");
}
