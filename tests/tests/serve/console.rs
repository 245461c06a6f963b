//! The approval console's files over loopback HTTP (`/console`, runtime/server/console): the
//! page at `/console` and `/console/`, every file it loads (found by reading the page and
//! following each module's imports) with its content type and the console's exact CSP and
//! headers, public even with auth on; no file names another origin, inlines a script or style,
//! or writes HTML from strings; an unknown file is 404.

use std::collections::{BTreeMap, BTreeSet};

use reqwest::Method;

use super::harness::{Server, refund_example, refund_tools, with_auth};

const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
    img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Status, the headers a console answer must carry, and the body.
async fn fetch(server: &Server, path: &str) -> (u16, BTreeMap<String, String>, String) {
    let response = server.request(Method::GET, path).send().await.unwrap();
    let status = response.status().as_u16();
    let headers = [
        "content-type",
        "content-security-policy",
        "x-content-type-options",
        "referrer-policy",
        "cache-control",
    ]
    .into_iter()
    .filter_map(|name| {
        let value = response.headers().get(name)?.to_str().ok()?.to_owned();
        Some((name.to_owned(), value))
    })
    .collect();
    (status, headers, response.text().await.unwrap())
}

fn assert_console_headers(path: &str, headers: &BTreeMap<String, String>, content_type: &str) {
    assert_eq!(headers["content-type"], content_type, "{path}");
    assert_eq!(headers["content-security-policy"], CSP, "{path}");
    assert_eq!(headers["x-content-type-options"], "nosniff", "{path}");
    assert_eq!(headers["referrer-policy"], "no-referrer", "{path}");
    assert_eq!(headers["cache-control"], "no-store", "{path}");
}

/// The values of `attribute="…"` in `html`.
fn attribute_values<'a>(html: &'a str, attribute: &str) -> Vec<&'a str> {
    let marker = format!(" {attribute}=\"");
    html.split(marker.as_str())
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap())
        .collect()
}

/// The modules a script imports (`from './x.js'`, `import './x.js'`), as written.
fn imports(script: &str) -> Vec<String> {
    let mut found = Vec::new();
    for marker in ["from '", "import '", "from \"", "import \""] {
        let quote = marker.chars().last().unwrap();
        for rest in script.split(marker).skip(1) {
            found.push(rest.split(quote).next().unwrap().to_owned());
        }
    }
    found
}

/// A reference as it resolves under `/console/`: `./api.js` and `/console/api.js` are `api.js`.
fn console_file(reference: &str) -> String {
    let name = reference
        .strip_prefix("/console/")
        .or_else(|| reference.strip_prefix("./"))
        .unwrap_or_else(|| panic!("{reference} is not a file of /console/"));
    assert!(
        !name.is_empty() && !name.contains('/') && !name.contains(".."),
        "{reference}: one file directly under /console/"
    );
    name.to_owned()
}

#[tokio::test]
async fn the_console_page_and_every_file_it_loads_are_served_same_origin_with_the_console_csp() {
    // Auth on, no token: the page and its files are public (the API calls they make are not).
    let server = Server::start(refund_example(), refund_tools(), with_auth()).await;

    let (status, headers, page) = fetch(&server, "/console").await;
    assert_eq!(status, 200, "{page}");
    assert_console_headers("/console", &headers, "text/html; charset=utf-8");
    let (status, headers, slash) = fetch(&server, "/console/").await;
    assert_eq!(status, 200);
    assert_console_headers("/console/", &headers, "text/html; charset=utf-8");
    assert_eq!(slash, page, "/console/ is the same page");
    assert!(page.starts_with("<!doctype html>"), "{page}");

    // The page loads its scripts and styles by absolute paths under /console/ (a relative
    // `console.js` would resolve to /console.js from /console), with no inline code.
    let scripts = attribute_values(&page, "src");
    let links = attribute_values(&page, "href");
    assert!(scripts.contains(&"/console/console.js"), "{scripts:?}");
    assert!(links.contains(&"/console/console.css"), "{links:?}");
    assert_eq!(
        page.matches("<script").count(),
        scripts.len(),
        "every script has a src, none is inline"
    );
    for inline in [
        "<style",
        " style=",
        " onclick=",
        " onload=",
        " onsubmit=",
        "javascript:",
    ] {
        assert!(!page.contains(inline), "the page has {inline}");
    }
    for href in &links {
        assert!(
            href.starts_with("/console/") || href.starts_with('#') || *href == "data:,",
            "a link outside the console: {href}"
        );
    }

    // Follow the page's files and every import of every module.
    let mut pending: Vec<String> = scripts
        .iter()
        .chain(links.iter().filter(|href| href.starts_with("/console/")))
        .map(|reference| console_file(reference))
        .collect();
    let mut files = BTreeMap::from([("(page)".to_owned(), page.clone())]);
    while let Some(name) = pending.pop() {
        if files.contains_key(&name) {
            continue;
        }
        let path = format!("/console/{name}");
        let (status, headers, text) = fetch(&server, &path).await;
        assert_eq!(status, 200, "{path}: {text}");
        let content_type = if name.ends_with(".js") {
            "text/javascript; charset=utf-8"
        } else if name.ends_with(".css") {
            "text/css; charset=utf-8"
        } else {
            panic!("{path}: neither a script nor a stylesheet")
        };
        assert_console_headers(&path, &headers, content_type);
        if name.ends_with(".js") {
            pending.extend(imports(&text).iter().map(|reference| console_file(reference)));
        }
        files.insert(name, text);
    }
    let names: BTreeSet<&str> = files.keys().map(String::as_str).collect();
    for expected in [
        "console.js",
        "console.css",
        "api.js",
        "inbox.js",
        "detail.js",
        "history.js",
    ] {
        assert!(names.contains(expected), "{expected} is not loaded: {names:?}");
    }
    // Every embedded file is reached from the page: none is served that nothing loads.
    for (name, _, _) in tenx_server::routes::console::ASSETS {
        assert!(names.contains(name), "{name} is served but nothing loads it");
    }

    // No file names another origin or a protocol-relative URL, and no script writes HTML.
    for (name, text) in &files {
        for pattern in ["http:", "https:", "//"] {
            assert!(!text.contains(pattern), "{name} contains {pattern}");
        }
        if name.ends_with(".js") {
            for sink in [
                "innerHTML",
                "outerHTML",
                "insertAdjacentHTML",
                "document.write",
                "eval(",
                "new Function",
            ] {
                assert!(!text.contains(sink), "{name} uses {sink}");
            }
        }
    }
}

#[tokio::test]
async fn an_unknown_console_file_is_404_with_the_console_headers() {
    let server = Server::refunds().await;
    for path in [
        "/console/nope.js",
        "/console/index.html",
        "/console/console.js.map",
        "/console/a/b.js",
    ] {
        let (status, headers, body) = fetch(&server, path).await;
        assert_eq!(status, 404, "{path}: {body}");
        assert!(body.contains("Not Found"), "{path}: {body}");
        if path != "/console/a/b.js" {
            // A file name the console route matched: its answer carries the console's headers.
            assert_eq!(headers["content-security-policy"], CSP, "{path}");
            assert_eq!(headers["cache-control"], "no-store", "{path}");
        }
    }
    // Other routes keep the API's own security headers.
    let (_, headers, _) = fetch(&server, "/ping").await;
    assert_eq!(
        headers["content-security-policy"],
        "default-src 'self'; frame-ancestors 'none'"
    );
    assert_eq!(headers["referrer-policy"], "strict-origin-when-cross-origin");
}
