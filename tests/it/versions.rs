//! Reading the past: an edit's note in the history, and a past version's panels run for
//! anyone who may see the dashboard (a viewer included), without publishing anything.

use reqwest::Method;
use serde_json::{Value, json};

use crate::support;

const PASSWORD: &str = "a long enough password";

fn state(title: &str, code: &str) -> Value {
    json!({"title": title, "layout": {"columns": 12}, "variables": [], "panels": [
        {"id": "n", "title": "Numbers", "type": "table", "renderer": "custom", "code": code}
    ]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_past_version_shows_its_own_data_to_a_viewer_and_edits_keep_their_note() {
    let app = support::spawn_app().await;
    let (status, made) =
        app.post("/api/dashboards", json!({"state": state("Old", "return [{a: 1}];")})).await;
    assert_eq!(status, 201, "{made}");
    let id = made["data"]["id"].as_str().unwrap().to_owned();
    let v1 = made["data"]["version"].as_u64().unwrap();
    let edit = json!({"baseVersion": v1, "state": state("New", "return [{a: 2}, {a: 3}];"), "note": "Edited panel “Numbers”"});
    let (status, saved) = app.put(&format!("/api/dashboards/{id}"), edit).await;
    assert_eq!(status, 200, "{saved}");
    let (_, history) = app.get(&format!("/api/dashboards/{id}/versions")).await;
    let notes: Vec<&Value> =
        history["data"].as_array().unwrap().iter().map(|v| &v["note"]).collect();
    assert!(notes.contains(&&json!("Edited panel “Numbers”")), "{history}");
    let long = json!({"baseVersion": v1 + 1, "state": state("New", "return [];"), "note": "x".repeat(201)});
    assert_eq!(app.put(&format!("/api/dashboards/{id}"), long).await.0, 400);

    assert_eq!(
        app.put(&format!("/api/dashboards/{id}/access"), json!({"visibility": "team"})).await.0,
        200
    );
    app.add_user("vic", PASSWORD, "viewer").await;
    let vic = app.cookie_client(&app.password_cookie("vic", PASSWORD).await);
    let data = |v: u64| {
        let url = app.url(&format!("/api/dashboards/{id}/versions/{v}/data"));
        let vic = vic.clone();
        async move {
            let r = vic.request(Method::GET, url).send().await.unwrap();
            (r.status().as_u16(), r.json::<Value>().await.unwrap())
        }
    };
    let (status, old) = data(v1).await;
    assert_eq!(status, 200, "{old}");
    assert_eq!(old["data"]["version"], v1);
    assert_eq!(old["data"]["panels"]["n"]["status"], "ok", "{old}");
    assert_eq!(old["data"]["panels"]["n"]["data"], json!([{"a": 1}]), "the old code's data");
    let (_, new) = data(v1 + 1).await;
    assert_eq!(new["data"]["panels"]["n"]["data"], json!([{"a": 2}, {"a": 3}]));
    assert_eq!(data(99).await.0, 404);
    // Nothing was published: the live dashboard is still the new version.
    let (_, now) = app.get(&format!("/api/dashboards/{id}")).await;
    assert_eq!(now["data"]["version"], v1 + 1);
    app.stop().await;
}
