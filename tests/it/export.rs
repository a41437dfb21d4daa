//! Dashboards leaving the screen: the JSON export and import (round trip exact) and a panel's
//! data as CSV with its provenance.

use serde_json::{Value, json};

use crate::support;

fn state() -> Value {
    json!({"title": "Exports", "layout": {"columns": 12}, "variables": [
        {"name": "symbol", "label": "Symbol", "type": "select", "options": ["BTC", "ETH"], "default": "BTC"}
    ], "panels": [
        {"id": "rows", "title": "Rows, quoted", "type": "table", "renderer": "custom",
         "code": "return [{name: 'a, \"b\"', v: 1}, {name: '=1+1', v: -2}];", "layout": {"w": 6, "h": 3}},
        {"id": "broken", "title": "Broken", "type": "table", "renderer": "custom", "code": "throw new Error('no rows here')"}
    ]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dashboard_exports_imports_back_exactly_and_a_panel_downloads_as_csv() {
    let app = support::spawn_app().await;
    let (status, made) = app.post("/api/dashboards", json!({"state": state()})).await;
    assert_eq!(status, 201, "{made}");
    let id = made["data"]["id"].as_str().unwrap().to_owned();

    let (status, doc) = app.get(&format!("/api/dashboards/{id}/export")).await;
    assert_eq!(status, 200, "{doc}");
    let doc = doc["data"].clone();
    assert_eq!(doc["format"], "boardsmith.dashboard");
    assert_eq!(doc["source"], json!({"id": id, "version": made["data"]["version"]}));
    let (status, imported) = app.post("/api/dashboards/import", doc.clone()).await;
    assert_eq!(status, 201, "{imported}");
    let copy = imported["data"]["id"].as_str().unwrap().to_owned();
    assert_ne!(copy, id);
    let (_, again) = app.get(&format!("/api/dashboards/{copy}/export")).await;
    assert_eq!(again["data"]["state"], doc["state"], "the round trip is exact");
    let (_, history) = app.get(&format!("/api/dashboards/{copy}/versions")).await;
    assert!(history["data"][0]["note"].as_str().unwrap().contains(&id), "{history}");
    // Refusals name what is wrong.
    let mut bad = doc.clone();
    bad["state"]["panels"][0]["renderer"] = json!("echarts");
    let (status, body) = app.post("/api/dashboards/import", bad).await;
    assert_eq!(status, 400, "{body}");
    assert!(body["msg"].as_str().unwrap().contains("panels[0].renderer"), "{body}");
    let mut newer = doc.clone();
    newer["formatVersion"] = json!(99);
    assert_eq!(app.post("/api/dashboards/import", newer).await.0, 400);
    let mut other = doc;
    other["format"] = json!("grafana");
    assert_eq!(app.post("/api/dashboards/import", other).await.0, 400);

    let r = app
        .http
        .get(app.url(&format!("/api/dashboards/{id}/panels/rows/csv")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/csv; charset=utf-8");
    assert_eq!(r.headers()["content-disposition"], "attachment; filename=\"rows-quoted.csv\"");
    assert_eq!(r.text().await.unwrap(), "name,v\r\n\"a, \"\"b\"\"\",1\r\n'=1+1,-2\r\n");
    let (status, body) = app.get(&format!("/api/dashboards/{id}/panels/broken/csv")).await;
    assert_eq!(status, 503, "{body}");
    assert!(body["msg"].as_str().unwrap().contains("no rows here"), "{body}");
    assert_eq!(app.get(&format!("/api/dashboards/{id}/panels/nope/csv")).await.0, 404);
    app.stop().await;
}
