//! Dashboards as PDF and PNG through real headless Chromium, read back with `pdftotext`, and
//! scheduled reports mailed with the file attached to a real SMTP server (issue 41).

#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};

use crate::alerts::{TICKER, ticker};
use crate::support::smtp::{Mode, SmtpSink};
use crate::support::upstream::Server;
use crate::support::{TestApp, spawn_app_with};

async fn app_with(origin: &str, chromium: Option<&str>) -> TestApp {
    let sdk = crate::support::sdk_at(origin);
    let chromium = chromium.map(std::path::PathBuf::from);
    spawn_app_with(Arc::new(tempfile::tempdir().unwrap()), false, move |c| {
        c.sdk = sdk;
        c.reports.render.chromium = chromium;
        c.reports.min_interval = Duration::from_secs(2);
        c.reports.tick = Duration::from_millis(300);
    })
    .await
}

/// Two panels with titles a PDF must show.
fn desk() -> Value {
    json!({
        "title": "Crypto desk morning",
        "layout": {"columns": 2},
        "panels": [
            {"id": "btc", "title": "Bitcoin last price", "type": "metric_card", "renderer": "custom",
             "code": "const t = await sdk.binance.ticker24h({symbol: 'BTCUSDT'});\nreturn {value: t.lastPrice, label: 'BTC'};"},
            {"id": "notes", "title": "Desk notes table", "type": "table", "renderer": "custom",
             "code": "return {columns: ['asset', 'view'], rows: [['BTC', 'long'], ['ETH', 'flat']]};"},
        ],
    })
}

/// The text `pdftotext` reads from `pdf`.
fn pdf_text(pdf: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.pdf");
    std::fs::write(&path, pdf).unwrap();
    let out = std::process::Command::new("pdftotext")
        .arg(&path)
        .arg("-")
        .output()
        .expect("pdftotext (poppler-utils) is needed: scripts/test installs it");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

async fn make(app: &TestApp) -> String {
    let (s, body) = app.post("/api/dashboards", json!({"state": desk()})).await;
    assert_eq!(s, 201, "{body}");
    body["data"]["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_dashboard_renders_as_pdf_and_png_in_chromium() {
    let srv = Server::start().await;
    srv.on(TICKER, vec![ticker(67_706.94)]);
    let app = app_with(&srv.origin, None).await;
    let id = make(&app).await;
    let (_, r) = app.get("/api/renderer").await;
    assert_eq!(r["data"]["available"], true, "{r}");

    let res = app
        .http
        .get(app.url(&format!("/api/dashboards/{id}/render?format=pdf")))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "application/pdf");
    let disposition = res.headers()["content-disposition"].to_str().unwrap().to_owned();
    assert!(
        disposition.starts_with("attachment; filename=\"crypto-desk-morning-"),
        "{disposition}"
    );
    let pdf = res.bytes().await.unwrap();
    assert!(pdf.starts_with(b"%PDF-"), "not a PDF");
    let text = pdf_text(&pdf);
    for want in ["Crypto desk morning", "Bitcoin last price", "Desk notes table", "ETH"] {
        assert!(text.contains(want), "`{want}` is not in the PDF's text:\n{text}");
    }
    // The panels had drawn: the price is there, not a loading state.
    assert!(text.contains("67,706.94") || text.contains("67706.94"), "{text}");

    let res = app
        .http
        .get(app.url(&format!("/api/dashboards/{id}/render?format=png")))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "image/png");
    let png = res.bytes().await.unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
    assert!(width >= 1000, "the window's width, not a thumbnail: {width}");

    // The browser's share link lived for the render only.
    let (_, links) = app.get(&format!("/api/dashboards/{id}/share")).await;
    assert_eq!(links["data"], json!([]), "{links}");
    let (s, bad) = app.get(&format!("/api/dashboards/{id}/render?format=gif")).await;
    assert_eq!(s, 400, "{bad}");
    let (s, _) = app.get("/api/dashboards/db_nope/render").await;
    assert_eq!(s, 404);
    app.stop().await;
}

#[tokio::test]
async fn without_chromium_renders_are_a_clear_503() {
    let srv = Server::start().await;
    let app = app_with(&srv.origin, Some("/nonexistent/chromium")).await;
    let id = make(&app).await;
    let (_, r) = app.get("/api/renderer").await;
    assert_eq!(r["data"]["available"], false, "{r}");
    assert!(r["data"]["reason"].as_str().unwrap().contains("BOARDSMITH_CHROMIUM"), "{r}");
    let (s, body) = app.get(&format!("/api/dashboards/{id}/render?format=png")).await;
    assert_eq!(s, 503, "{body}");
    assert_ne!(body["code"], 0);
    assert!(body["msg"].as_str().unwrap().contains("/nonexistent/chromium"), "{body}");
    app.stop().await;
}

/// The relay in Settings (answered, to change) and an e-mail channel `desk` to ana.
async fn mail_desk(app: &TestApp, sink: &SmtpSink) -> Value {
    let relay = json!({"host": "localhost", "port": sink.port, "username": "alerts",
                       "password": "s3cret", "from": "reports@example.com",
                       "caFile": sink.ca.to_str().unwrap()});
    assert_eq!(app.put("/api/admin/settings", json!({"mail": relay})).await.0, 200);
    let to = json!(["ana@example.com"]);
    let (s, body) =
        app.post("/api/channels", json!({"name": "desk", "type": "email", "to": to})).await;
    assert_eq!(s, 201, "{body}");
    relay
}

fn attachment(mail: &Value) -> (String, Vec<u8>) {
    let a = &mail["attachments"][0];
    assert_eq!(a["type"], "application/pdf", "{mail}");
    let bytes =
        base64::engine::general_purpose::STANDARD.decode(a["base64"].as_str().unwrap()).unwrap();
    (a["filename"].as_str().unwrap().to_owned(), bytes)
}

#[tokio::test]
async fn a_scheduled_report_mails_the_pdf_on_its_schedule() {
    let sink = SmtpSink::start(Mode::Starttls).await;
    let srv = Server::start().await;
    srv.on(TICKER, vec![ticker(67_706.94)]);
    let app = app_with(&srv.origin, None).await;
    let id = make(&app).await;
    mail_desk(&app, &sink).await;

    // Bad reports are named.
    let (s, bad) = app
        .post(
            "/api/reports",
            json!({"dashboardId": id, "cron": "*/2 * * * * *", "notify": ["nope"]}),
        )
        .await;
    assert_eq!(s, 400, "{bad}");
    assert!(bad["msg"].as_str().unwrap().starts_with("notify[0]"), "{bad}");
    let (s, bad) = app
        .post("/api/reports", json!({"dashboardId": id, "cron": "every day", "notify": ["desk"]}))
        .await;
    assert_eq!(s, 400, "{bad}");
    assert!(bad["msg"].as_str().unwrap().starts_with("cron: `every day`"), "{bad}");
    let (s, bad) = app
        .post("/api/reports", json!({"dashboardId": id, "cron": "* * * * * *", "notify": ["desk"]}))
        .await;
    assert_eq!(s, 400, "{bad}");
    assert!(bad["msg"].as_str().unwrap().contains("at most every 2s"), "{bad}");

    // Every two seconds: the scheduler sends it with nobody asking.
    let (s, made) = app
        .post(
            "/api/reports",
            json!({"dashboardId": id, "name": "Morning pack", "cron": "*/2 * * * * *",
                   "timezone": "Europe/London", "format": "pdf", "notify": ["desk"]}),
        )
        .await;
    assert_eq!(s, 201, "{made}");
    let report = made["data"]["id"].as_str().unwrap().to_owned();
    assert!(made["data"]["nextRunAt"].as_i64().is_some(), "{made}");
    let mails = sink.wait_for(1).await;
    // Delete it right away: nothing more is sent.
    let r = app.http.delete(app.url(&format!("/api/reports/{report}"))).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let mail = &mails[0];
    assert_eq!(mail["tls"], true);
    let data = mail["data"].as_str().unwrap();
    assert!(data.contains("Subject: [Boardsmith] Morning pack: Crypto desk morning"), "{data}");
    let (name, pdf) = attachment(mail);
    assert!(name.starts_with("crypto-desk-morning-") && name.ends_with(".pdf"), "{name}");
    let text = pdf_text(&pdf);
    for want in ["Crypto desk morning", "Bitcoin last price", "Desk notes table"] {
        assert!(text.contains(want), "`{want}` is not in the report:\n{text}");
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after = sink.received().len();
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(sink.received().len(), after, "a deleted report runs no more");
    app.stop().await;
}

#[tokio::test]
async fn a_report_run_by_hand_records_what_each_channel_did() {
    let sink = SmtpSink::start(Mode::Starttls).await;
    let srv = Server::start().await;
    srv.on(TICKER, vec![ticker(67_706.94)]);
    let app = app_with(&srv.origin, None).await;
    let id = make(&app).await;
    let relay = mail_desk(&app, &sink).await;
    let (s, made) = app
        .post(
            "/api/reports",
            json!({"dashboardId": id, "cron": "0 7 * * 1-5", "notify": ["desk"],
                                     "format": "png", "paused": true}),
        )
        .await;
    assert_eq!(s, 201, "{made}");
    assert_eq!(made["data"]["name"], "Crypto desk morning report");
    assert!(made["data"].get("nextRunAt").is_none(), "paused: {made}");
    let report = made["data"]["id"].as_str().unwrap().to_owned();

    let (s, run) = app.post(&format!("/api/reports/{report}/run"), json!({})).await;
    assert_eq!(s, 200, "{run}");
    assert_eq!(run["data"]["status"], "sent");
    assert!(run["data"]["bytes"].as_u64().unwrap() > 1000, "{run}");
    let mail = &sink.wait_for(1).await[0];
    assert_eq!(mail["attachments"][0]["type"], "image/png", "{mail}");
    let (_, runs) = app.get(&format!("/api/reports/{report}/runs")).await;
    assert_eq!(runs["data"][0]["deliveries"][0]["status"], "sent", "{runs}");

    // The relay gone wrong: the run says so, as a 422.
    let mut wrong = relay.clone();
    wrong["password"] = json!("wrong");
    assert_eq!(app.put("/api/admin/settings", json!({"mail": wrong})).await.0, 200);
    let (s, failed) = app.post(&format!("/api/reports/{report}/run"), json!({})).await;
    assert_eq!(s, 422, "{failed}");
    assert!(failed["msg"].as_str().unwrap().starts_with("not delivered (desk: "), "{failed}");
    let (_, runs) = app.get(&format!("/api/reports/{report}/runs")).await;
    assert_eq!(runs["data"].as_array().unwrap().len(), 2, "{runs}");
    assert_eq!(runs["data"][0]["status"], "failed", "newest first: {runs}");
    app.stop().await;
}
