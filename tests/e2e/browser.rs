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

    /// No element or attribute came from the data: the template has no script, image, SVG or
    /// frame, and in a serialised DOM a `<` of text is always `&lt;`.
    fn assert_nothing_injected(&self) {
        for tag in ["<script", "<img", "<svg", "<iframe", "<b ", "href=\"javascript:"] {
            assert!(!self.dom.to_ascii_lowercase().contains(tag), "{}: {tag} in the DOM:\n{}", self.name, self.dom);
        }
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
        assert_eq!(r.status, 200, "{}: link {href} is broken: {}", page.name, r.text());
        if target.contains("format=json") {
            r.json();
        }
        followed += 1;
    }
    assert!(followed >= 1, "{}: no API link in {links:?}", page.name);
}
