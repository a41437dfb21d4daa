//! E-mail channels (issue 41) against a real SMTP server (aiosmtpd) started by the test: the
//! relay set in Settings with its password sealed, STARTTLS and AUTH, one mail per
//! transition threaded by rule, and a relay that offers no STARTTLS getting nothing.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use serde_json::{Value, json};

use crate::alerts::{TICKER, alerts_until, app_at, state, ticker};
use crate::support::smtp::{Mode, SmtpSink};
use crate::support::upstream::Server;

fn header<'a>(mail: &'a Value, name: &str) -> &'a str {
    let data = mail["data"].as_str().unwrap();
    let prefix = format!("{name}: ");
    data.lines().find_map(|l| l.strip_prefix(prefix.as_str())).unwrap_or_default()
}

#[tokio::test]
async fn an_email_channel_sends_one_mail_per_transition_over_starttls() {
    let sink = SmtpSink::start(Mode::Starttls).await;
    let srv = Server::start().await;
    srv.on(TICKER, vec![ticker(69_000.0)]);
    let app = app_at(&srv.origin).await;

    // No relay yet: an e-mail channel can be made, but its test says how to set one.
    let (s, none) = app.get("/api/admin/mail").await;
    assert_eq!((s, &none["data"]), (200, &Value::Null), "{none}");
    let (s, bad) = app
        .post("/api/channels", json!({"name": "desk-mail", "type": "email", "to": ["ana@"]}))
        .await;
    assert_eq!(s, 400, "{bad}");
    assert!(bad["msg"].as_str().unwrap().starts_with("to[0]: `ana@`"), "{bad}");
    let to = json!(["ana@example.com", "Bo <bo@example.com>"]);
    let (s, made) =
        app.post("/api/channels", json!({"name": "desk-mail", "type": "email", "to": to})).await;
    assert_eq!(s, 201, "{made}");
    assert!(made["data"].get("secret").is_none(), "{made}");
    assert_eq!(made["data"]["target"], "ana@example.com, Bo <bo@example.com>");
    let (s, failed) = app.post("/api/channels/desk-mail/test", json!({})).await;
    assert_eq!(s, 422, "{failed}");
    assert!(failed["msg"].as_str().unwrap().contains("Settings"), "{failed}");

    // The relay in Settings: the password is sealed, never answered.
    let relay = json!({"host": "localhost", "port": sink.port, "security": "starttls",
                       "username": "alerts", "password": "s3cret",
                       "from": "Boardsmith <alerts@example.com>",
                       "caFile": sink.ca.to_str().unwrap()});
    let (s, view) = app.put("/api/admin/settings", json!({"mail": relay})).await;
    assert_eq!(s, 200, "{view}");
    assert_eq!(view["data"]["mailPasswordSet"], true, "{view}");
    assert!(!view.to_string().contains("s3cret"), "{view}");
    let (_, status) = app.get("/api/admin/mail").await;
    assert_eq!(status["data"]["source"], "settings", "{status}");
    assert_eq!(status["data"]["server"], format!("localhost:{}", sink.port));
    assert_eq!(status["data"]["signsIn"], true);

    // Saving the settings again without the password keeps it.
    let mut again = relay.clone();
    again.as_object_mut().unwrap().remove("password");
    let (s, view) = app.put("/api/admin/settings", json!({"mail": again})).await;
    assert_eq!((s, &view["data"]["mailPasswordSet"]), (200, &json!(true)), "{view}");
    let (s, sent) = app.post("/api/channels/desk-mail/test", json!({})).await;
    assert_eq!(s, 200, "{sent}");
    assert_eq!(sent["data"]["status"], "sent");
    let test = &sink.wait_for(1).await[0];
    assert_eq!(test["tls"], true, "STARTTLS before anything: {test}");
    assert_eq!(test["user"], "alerts");
    assert_eq!(test["to"], json!(["ana@example.com", "bo@example.com"]));
    assert_eq!(test["from"], "alerts@example.com");
    assert_eq!(header(test, "Subject"), "[Boardsmith] Firing: Test notification");

    // A rule that mails: one firing, one resolved, in one thread.
    let doc = state(json!([{"id": "btc-high", "name": "BTC above 70k", "panelId": "btc",
                             "when": {"op": ">", "value": 70000}, "notify": ["desk-mail"]}]));
    let (s, body) = app.post("/api/dashboards", json!({"state": doc})).await;
    assert_eq!(s, 201, "{body}");
    let id = body["data"]["id"].as_str().unwrap().to_owned();
    alerts_until(&app, "a first judgement", |a| a["evaluatedAt"].as_i64() > Some(0)).await;
    srv.on(TICKER, vec![ticker(71_000.0)]);
    alerts_until(&app, "firing", |a| a["status"] == "firing").await;
    let firing = sink.wait_for(2).await[1].clone();
    srv.on(TICKER, vec![ticker(68_000.0)]);
    alerts_until(&app, "resolved", |a| a["status"] == "ok").await;
    let resolved = sink.wait_for(3).await[2].clone();
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert_eq!(sink.received().len(), 3, "one mail per transition");

    assert_eq!(header(&firing, "Subject"), "[Boardsmith] Firing: BTC above 70k");
    assert_eq!(header(&resolved, "Subject"), "[Boardsmith] Resolved: BTC above 70k");
    let refs = header(&firing, "References");
    assert!(refs.starts_with(&format!("<{id}.btc-high.")), "{refs}");
    assert_eq!(header(&resolved, "In-Reply-To"), refs, "the resolved mail answers the thread");
    assert_ne!(header(&firing, "Message-ID"), header(&resolved, "Message-ID"));
    let text = firing["data"].as_str().unwrap();
    assert!(text.contains("Value: 71000"), "{text}");
    assert!(text.contains("Threshold: 70000"), "{text}");
    assert!(text.contains(&format!("Open the dashboard: /#d={id}")), "{text}");
    let (_, n) = app.get("/api/notifications").await;
    let fired = n["data"].as_array().unwrap().iter().find(|n| n["status"] == "firing").unwrap();
    assert_eq!(fired["deliveries"][0]["channel"], "desk-mail");
    assert_eq!(fired["deliveries"][0]["status"], "sent", "{fired}");
    app.stop().await;
}

#[tokio::test]
async fn a_relay_without_starttls_gets_nothing_and_a_wrong_password_is_not_retried() {
    let plain = SmtpSink::start(Mode::Plain).await;
    let tls = SmtpSink::start(Mode::Starttls).await;
    let srv = Server::start().await;
    let app = app_at(&srv.origin).await;
    let (s, _) = app
        .post("/api/channels", json!({"name": "m", "type": "email", "to": ["ana@example.com"]}))
        .await;
    assert_eq!(s, 201);

    // STARTTLS asked of a relay that does not offer it: refused before any mail is sent.
    let relay = |port: u16, password: &str| {
        json!({"mail": {"host": "localhost", "port": port, "username": "alerts",
                        "password": password, "from": "alerts@example.com",
                        "caFile": tls.ca.to_str().unwrap()}})
    };
    let (s, _) = app.put("/api/admin/settings", relay(plain.port, "s3cret")).await;
    assert_eq!(s, 200);
    let (s, failed) = app.post("/api/channels/m/test", json!({})).await;
    assert_eq!(s, 422, "{failed}");
    let msg = failed["msg"].as_str().unwrap();
    assert!(msg.contains(&format!("localhost:{}", plain.port)), "{msg}");
    assert!(plain.received().is_empty(), "nothing in the clear");

    // A wrong password is a permanent refusal: one attempt, said plainly.
    let (s, _) = app.put("/api/admin/settings", relay(tls.port, "wrong")).await;
    assert_eq!(s, 200);
    let (s, failed) = app.post("/api/channels/m/test", json!({})).await;
    assert_eq!(s, 422, "{failed}");
    assert_eq!(failed["data"]["attempts"], 1, "{failed}");
    assert!(failed["msg"].as_str().unwrap().contains("refused"), "{failed}");
    assert!(tls.received().is_empty());

    // Bad settings are named.
    let (s, bad) = app
        .put("/api/admin/settings", json!({"mail": {"host": "smtp.example.com:25", "from": "x@y"}}))
        .await;
    assert_eq!(s, 400, "{bad}");
    assert!(bad["msg"].as_str().unwrap().contains("mail.host"), "{bad}");
    app.stop().await;
}

#[tokio::test]
async fn a_for_each_rule_reaches_people_as_one_mail_and_machines_as_one_event_each() {
    let sink = SmtpSink::start(Mode::Starttls).await;
    let srv = Server::start().await;
    srv.on(TICKER, vec![ticker(40.0)]);
    srv.on("/hook", vec![crate::support::upstream::Reply::Body(200, "{}".into())]);
    let app = app_at(&srv.origin).await;
    let relay = json!({"host": "localhost", "port": sink.port, "username": "alerts",
                       "password": "s3cret", "from": "alerts@example.com",
                       "caFile": sink.ca.to_str().unwrap()});
    assert_eq!(app.put("/api/admin/settings", json!({"mail": relay})).await.0, 200);
    let to = json!(["ana@example.com"]);
    let (s, _) =
        app.post("/api/channels", json!({"name": "mail", "type": "email", "to": to})).await;
    assert_eq!(s, 201);
    let url = format!("{}/hook", srv.origin);
    let (s, _) =
        app.post("/api/channels", json!({"name": "hook", "type": "webhook", "url": url})).await;
    assert_eq!(s, 201);
    let mut doc = state(json!([{"id": "any-high", "name": "Pair above 50", "panelId": "btc",
                                 "when": {"op": ">", "value": 50}, "forEach": "symbol",
                                 "notify": ["mail", "hook"]}]));
    doc["variables"] = json!([{"name": "symbol", "label": "Pair", "type": "select",
                               "options": ["BTCUSDT", "ETHUSDT", "SOLUSDT"], "default": "BTCUSDT"}]);
    doc["panels"][0]["code"] = json!(
        "const t = await sdk.binance.ticker24h({symbol: vars.symbol});\nreturn {value: t.lastPrice, label: vars.symbol};"
    );
    let (s, body) = app.post("/api/dashboards", json!({"state": doc})).await;
    assert_eq!(s, 201, "{body}");
    alerts_until(&app, "a first judgement", |a| a["evaluatedAt"].as_i64() > Some(0)).await;

    srv.on(TICKER, vec![ticker(60.0)]);
    alerts_until(&app, "every pair firing", |a| a["status"] == "firing").await;
    let mails = sink.wait_for(1).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while srv.posts("/hook").len() < 3 {
        assert!(tokio::time::Instant::now() < deadline, "{:?}", srv.posts("/hook"));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert_eq!(sink.received().len(), 1, "one mail for the three: {:#?}", sink.received());
    assert_eq!(srv.posts("/hook").len(), 3, "one event each");
    assert_eq!(
        header(&mails[0], "Subject"),
        "[Boardsmith] 3 alerts on BTC watch: 3 firing, 0 resolved"
    );
    let text = mails[0]["data"].as_str().unwrap();
    for key in ["BTCUSDT", "ETHUSDT", "SOLUSDT"] {
        assert!(text.contains(&format!("Firing: Pair above 50 [{key}]")), "{text}");
    }
    let (_, n) = app.get("/api/notifications").await;
    for n in n["data"].as_array().unwrap() {
        let channels: Vec<&str> = n["deliveries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["channel"].as_str().unwrap())
            .collect();
        assert_eq!(channels.len(), 2, "{n}");
        assert!(n["deliveries"].as_array().unwrap().iter().all(|d| d["status"] == "sent"), "{n}");
    }
    app.stop().await;
}
