//! The browser app's files as the binary serves them: the page, the bundle in the encodings a
//! browser asks for, revalidation, and no way out of the bundle. (What the app does in a browser
//! is tested by `web/tests` in Chromium.)

use reqwest::header::{ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_TYPE, ETAG, IF_NONE_MATCH};

use crate::support::spawn_app;

#[tokio::test]
async fn serves_the_page_and_the_bundle_compressed_and_revalidated() {
    let app = spawn_app().await;
    let http = reqwest::Client::new();

    let page = http.get(app.url("/")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert_eq!(page.headers()[CONTENT_TYPE], "text/html; charset=utf-8");
    let html = page.text().await.unwrap();
    assert!(html.contains(r#"src="/assets/app.js""#), "{html}");

    // The entry imports the app's chunks (esbuild code splitting, content-hashed names); the
    // largest chunk it reaches holds the chart libraries.
    let chunks = |text: &str| -> Vec<String> {
        let mut names: Vec<String> = text
            .split("\"./")
            .skip(1)
            .filter_map(|rest| rest.split('"').next())
            .filter(|name| name.ends_with(".js") && !name.contains('/'))
            .map(str::to_owned)
            .collect();
        names.dedup();
        names
    };
    let entry = http.get(app.url("/assets/app.js")).send().await.unwrap().text().await.unwrap();
    let mut reached: Vec<(usize, String)> = Vec::new();
    let mut queue = chunks(&entry);
    while let Some(name) = queue.pop() {
        if reached.iter().any(|(_, n)| *n == name) {
            continue;
        }
        let r = http.get(app.url(&format!("/assets/{name}"))).send().await.unwrap();
        assert_eq!(r.status(), 200, "{name}");
        let text = r.text().await.unwrap();
        queue.extend(chunks(&text));
        reached.push((text.len(), name));
    }
    reached.sort();
    let (_, biggest) = reached.last().cloned().expect("the entry imports chunks");
    let asset = format!("/assets/{biggest}");

    // No Accept-Encoding: the plain file.
    let plain = http.get(app.url(&asset)).send().await.unwrap();
    assert_eq!(plain.status(), 200);
    assert!(plain.headers().get(CONTENT_ENCODING).is_none());
    assert_eq!(plain.headers()[CONTENT_TYPE], "text/javascript; charset=utf-8");
    let plain_len = plain.bytes().await.unwrap().len();
    assert!(plain_len > 100_000, "the bundle has the chart libraries ({plain_len} bytes)");

    // A browser's Accept-Encoding: brotli, much smaller; gzip when brotli is refused.
    let br = http
        .get(app.url(&asset))
        .header(ACCEPT_ENCODING, "gzip, deflate, br")
        .send()
        .await
        .unwrap();
    assert_eq!(br.headers()[CONTENT_ENCODING], "br");
    let etag = br.headers()[ETAG].clone();
    let br_len = br.bytes().await.unwrap().len();
    assert!(br_len * 3 < plain_len, "brotli {br_len} vs plain {plain_len}");
    let gz =
        http.get(app.url(&asset)).header(ACCEPT_ENCODING, "br;q=0, gzip").send().await.unwrap();
    assert_eq!(gz.headers()[CONTENT_ENCODING], "gzip");
    assert_ne!(gz.headers()[ETAG], etag, "each encoding has its own ETag");

    // A reload revalidates: same ETag → 304 with no body.
    let again = http
        .get(app.url(&asset))
        .header(ACCEPT_ENCODING, "br")
        .header(IF_NONE_MATCH, etag.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
    assert!(again.bytes().await.unwrap().is_empty());

    let css = http.get(app.url("/assets/app.css")).send().await.unwrap();
    assert_eq!(css.headers()[CONTENT_TYPE], "text/css; charset=utf-8");

    // Unknown files and attempts to leave the bundle are 404s; the API keeps its envelopes.
    for path in ["/assets/nope.js", "/assets/..%2F..%2FCargo.toml", "/assets/%2Fetc%2Fpasswd"] {
        let res = http.get(app.url(path)).send().await.unwrap();
        assert_eq!(res.status(), 404, "{path}");
    }
    let (status, body) = app.get("/api/nope").await;
    assert_eq!(status, 404);
    assert_eq!(body["code"], 404);
    app.stop().await;
}
