//! E-mail channels: a notification as a message (plain text and HTML, threaded so a rule's
//! firing and resolved mails sit together), or a report with its file attached, sent through
//! the configured SMTP relay with STARTTLS or TLS (lettre over rustls, the platform's roots
//! plus any the relay's `caFile` adds). Owns the messages' form and the SMTP session; knows
//! nothing of channels' records or of where the relay's settings come from.

use std::time::Duration;

use lettre::message::header::ContentType;
use lettre::message::{Attachment, Mailbox, MultiPart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Certificate, Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use base::mail::{MailRelay, MailSecurity};
use dashboard::alerts::{Severity, Transition};

use super::{Notification, ReportFile};

/// Most recipients of one e-mail channel.
pub const MAX_RECIPIENTS: usize = 20;
/// How long one SMTP exchange may take.
const SMTP_TIMEOUT: Duration = Duration::from_secs(20);

/// Why a message could not be built or sent.
#[derive(Debug, thiserror::Error)]
pub enum MailError {
    /// No relay is configured.
    #[error(
        "no mail relay is configured: set one in Settings -> E-mail, or `[smtp]` in boardsmith.toml"
    )]
    NoRelay,
    /// An address or setting is wrong; sending again will not help.
    #[error("{0}")]
    Invalid(String),
    /// The relay refused or could not be reached.
    #[error("{message}")]
    Smtp {
        /// What happened.
        message: String,
        /// Whether a later attempt may succeed (a 4xx reply, a timeout, a dropped connection).
        transient: bool,
    },
}

/// `to` as mailboxes, or which one is not an address.
pub fn recipients(to: &[String]) -> Result<Vec<Mailbox>, MailError> {
    if to.is_empty() || to.len() > MAX_RECIPIENTS {
        return Err(MailError::Invalid(format!(
            "to: an e-mail channel has 1 to {MAX_RECIPIENTS} recipients"
        )));
    }
    to.iter()
        .enumerate()
        .map(|(i, a)| {
            a.trim()
                .parse::<Mailbox>()
                .map_err(|e| MailError::Invalid(format!("to[{i}]: `{a}` is not an address ({e})")))
        })
        .collect()
}

/// The message for `n` from `relay.from` to `to`. Its Message-ID comes from the notification's
/// id (a resent one is the same message); it refers to the rule's thread, so a mail client
/// shows firing and resolved together.
pub fn message(
    relay: &MailRelay,
    to: &[Mailbox],
    n: &Notification,
    base_url: &str,
) -> Result<Message, MailError> {
    let from = sender(relay)?;
    let domain = from.email.domain().to_owned();
    let link = format!("{base_url}{}", n.link);
    let (head, text, html) = bodies(n, &link);
    let thread = n.id.rsplit_once('/').map_or(n.id.as_str(), |(t, _)| t);
    let mut b = Message::builder()
        .from(from)
        .subject(format!("[Boardsmith] {head}"))
        .message_id(Some(format!("<{}@{domain}>", id_part(&n.id))))
        .references(format!("<{}@{domain}>", id_part(thread)))
        .date(std::time::UNIX_EPOCH + Duration::from_millis(n.at.max(0).unsigned_abs()));
    if n.status == Transition::Resolved {
        b = b.in_reply_to(format!("<{}@{domain}>", id_part(thread)));
    }
    for m in to {
        b = b.to(m.clone());
    }
    b.multipart(MultiPart::alternative_plain_html(text, html))
        .map_err(|e| MailError::Invalid(format!("the message cannot be built: {e}")))
}

/// One message for several notifications of one judgement: the title, then a line each.
pub fn group_message(
    relay: &MailRelay,
    to: &[Mailbox],
    all: &[Notification],
    base_url: &str,
) -> Result<Message, MailError> {
    let from = sender(relay)?;
    let domain = from.email.domain().to_owned();
    let link = all.first().map(|n| format!("{base_url}{}", n.link)).unwrap_or_default();
    let (title, lines) = super::group_lines(all);
    let text = format!("{title}\n\n{}\n\nOpen the dashboard: {link}\n", lines.join("\n"));
    let esc = |s: &str| htmlize::escape_text(s).into_owned();
    let items: String = lines.iter().map(|l| format!("<li>{}</li>", esc(l))).collect();
    let html = format!(
        "<!doctype html><html><body><h2>{}</h2><ul>{items}</ul><p><a href=\"{}\">Open the \
         dashboard</a></p></body></html>",
        esc(&title),
        htmlize::escape_attribute(&link),
    );
    let first = all.first().map_or("", |n| n.id.as_str());
    let at = all.first().map_or(0, |n| n.at);
    let mut b = Message::builder()
        .from(from)
        .subject(format!("[Boardsmith] {title}"))
        .message_id(Some(format!("<{}@{domain}>", id_part(&format!("{first}+{}", all.len())))))
        .date(std::time::UNIX_EPOCH + Duration::from_millis(at.max(0).unsigned_abs()));
    for m in to {
        b = b.to(m.clone());
    }
    b.multipart(MultiPart::alternative_plain_html(text, html))
        .map_err(|e| MailError::Invalid(format!("the message cannot be built: {e}")))
}

/// The message for report `r`: a few lines, and the file attached.
pub fn report_message(
    relay: &MailRelay,
    to: &[Mailbox],
    r: &ReportFile,
    base_url: &str,
) -> Result<Message, MailError> {
    let from = sender(relay)?;
    let domain = from.email.domain().to_owned();
    let link = format!("{base_url}{}", r.link);
    let at = chrono::DateTime::from_timestamp_millis(r.at)
        .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_default();
    let text = format!(
        "{}: {}, as of {at}.\nThe {} is attached.\n\nOpen the dashboard: {link}\n",
        r.report_name, r.dashboard_title, r.filename
    );
    let esc = |s: &str| htmlize::escape_text(s).into_owned();
    let html = format!(
        "<!doctype html><html><body><p><b>{}</b>: {}, as of {at}.</p><p>The {} is \
         attached.</p><p><a href=\"{}\">Open the dashboard</a></p></body></html>",
        esc(&r.report_name),
        esc(&r.dashboard_title),
        esc(&r.filename),
        htmlize::escape_attribute(&link),
    );
    let kind = ContentType::parse(&r.content_type)
        .map_err(|e| MailError::Invalid(format!("content type {}: {e}", r.content_type)))?;
    let file = Attachment::new(r.filename.clone()).body(r.bytes.clone(), kind);
    let mut b = Message::builder()
        .from(from)
        .subject(format!("[Boardsmith] {}: {}", r.report_name, r.dashboard_title))
        .message_id(Some(format!("<{}@{domain}>", id_part(&r.id))))
        .date(std::time::UNIX_EPOCH + Duration::from_millis(r.at.max(0).unsigned_abs()));
    for m in to {
        b = b.to(m.clone());
    }
    b.multipart(
        MultiPart::mixed()
            .multipart(MultiPart::alternative_plain_html(text, html))
            .singlepart(file),
    )
    .map_err(|e| MailError::Invalid(format!("the message cannot be built: {e}")))
}

/// The relay's sender as a mailbox.
fn sender(relay: &MailRelay) -> Result<Mailbox, MailError> {
    relay
        .from
        .parse()
        .map_err(|e| MailError::Invalid(format!("from: `{}` is not an address ({e})", relay.from)))
}

/// A Message-ID's left part for `id`: its letters, digits, `-` and `_` in dot-separated runs
/// (readable in a mail client's headers), then a digest of the whole id, so two ids that
/// read alike never share a Message-ID (clients drop a repeated one).
fn id_part(id: &str) -> String {
    use sha2::Digest as _;
    let readable: String = id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || "-_".contains(c) { c } else { '.' })
        .collect();
    let digest = sha2::Sha256::digest(id.as_bytes());
    let hex: String = digest.iter().take(5).map(|b| format!("{b:02x}")).collect();
    let mut runs: Vec<&str> = readable.split('.').filter(|r| !r.is_empty()).collect();
    runs.push(&hex);
    runs.join(".")
}

/// The subject's words, the plain text and the HTML of `n`.
fn bodies(n: &Notification, link: &str) -> (String, String, String) {
    let head = n.headline();
    let severity = match n.severity {
        Severity::Info => "info",
        Severity::Warning => "warning",
        Severity::Critical => "critical",
    };
    let at = chrono::DateTime::from_timestamp_millis(n.at)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_default();
    let mut facts: Vec<(&str, String)> = vec![
        ("Dashboard", n.dashboard_title.clone()),
        ("Panel", n.panel_title.clone()),
        ("Severity", severity.into()),
    ];
    if let Some(v) = n.value {
        facts.push(("Value", number(v)));
    }
    if let Some(t) = n.threshold {
        facts.push(("Threshold", number(t)));
    }
    facts.push(("At", at));
    let mut text = format!("{head}\n{}\n\n", n.message);
    for (k, v) in &facts {
        text.push_str(&format!("{k}: {v}\n"));
    }
    text.push_str(&format!("\nOpen the dashboard: {link}\n"));
    let esc = |s: &str| htmlize::escape_text(s).into_owned();
    let rows: String = facts
        .iter()
        .map(|(k, v)| format!("<tr><th align=\"left\">{k}</th><td>{}</td></tr>", esc(v)))
        .collect();
    let html = format!(
        "<!doctype html><html><body><h2>{}</h2><p>{}</p><table>{rows}</table>\
         <p><a href=\"{}\">Open the dashboard</a></p></body></html>",
        esc(&head),
        esc(&n.message),
        htmlize::escape_attribute(link),
    );
    (head, text, html)
}

/// A value as people read it: no float noise (`0.0007000000000000001` is `0.0007`).
fn number(v: f64) -> String {
    let s = format!("{v:.10}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-" { "0".into() } else { s.into() }
}

/// Sends `message` through `relay`: one SMTP session, which fails rather than send in the
/// clear when STARTTLS or TLS was asked for.
#[base::boxed]
pub async fn send(relay: &MailRelay, message: Message) -> Result<(), MailError> {
    let mut b = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(relay.host.as_str())
        .port(relay.port())
        .timeout(Some(SMTP_TIMEOUT));
    if relay.security != MailSecurity::None {
        let mut tls = TlsParameters::builder(relay.host.clone());
        if let Some(path) = &relay.ca_file {
            let pem = std::fs::read(path)
                .map_err(|e| MailError::Invalid(format!("caFile {path}: {e}")))?;
            let cert = Certificate::from_pem(&pem)
                .map_err(|e| MailError::Invalid(format!("caFile {path}: {e}")))?;
            tls = tls.add_root_certificate(cert);
        }
        let tls =
            tls.build_rustls().map_err(|e| MailError::Invalid(format!("TLS settings: {e}")))?;
        b = b.tls(match relay.security {
            MailSecurity::Tls => Tls::Wrapper(tls),
            _ => Tls::Required(tls),
        });
    }
    if let Some(user) = relay.username.as_ref().filter(|u| !u.is_empty()) {
        b = b.credentials(Credentials::new(
            user.clone(),
            relay.password.clone().unwrap_or_default(),
        ));
    }
    b.build().send(message).await.map(drop).map_err(|e| MailError::Smtp {
        transient: !(e.is_permanent() || e.is_client() || e.is_tls()),
        message: smtp_error(relay, &e),
    })
}

/// One sentence for a failed session, with its SMTP reply or cause.
fn smtp_error(relay: &MailRelay, e: &lettre::transport::smtp::Error) -> String {
    let mut msg = format!("the mail relay {}:{} ", relay.host, relay.port());
    let cause = base::text::causes(e);
    if e.is_tls() {
        msg.push_str("failed the TLS handshake: ");
    } else if e.is_permanent() || e.is_transient() {
        msg.push_str("refused the message: ");
    } else {
        msg.push_str("cannot be reached: ");
    }
    msg.push_str(&cause);
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notification(status: Transition) -> Notification {
        Notification {
            id: "d1/funding/BTCUSDT/2".into(),
            status,
            dashboard_id: "d1".into(),
            dashboard_title: "Perps <desk>".into(),
            panel_id: "p1".into(),
            panel_title: "Funding".into(),
            rule_id: "funding".into(),
            rule_name: "Funding above 0.05%".into(),
            severity: Severity::Critical,
            key: Some("BTCUSDT".into()),
            value: Some(0.000_700_000_000_000_000_1),
            threshold: Some(0.0005),
            message: "funding 0.0007 > 0.0005".into(),
            at: 1_764_480_000_000,
            link: "/#/d/d1".into(),
            notify: vec!["desk".into()],
            deliveries: vec![],
            reason: Default::default(),
            muted: None,
            silence: None,
        }
    }

    fn relay() -> MailRelay {
        MailRelay {
            host: "smtp.example.com".into(),
            port: None,
            security: MailSecurity::Starttls,
            username: None,
            password: None,
            from: "Boardsmith <alerts@example.com>".into(),
            ca_file: None,
        }
    }

    #[test]
    fn messages_carry_the_notification_and_thread_by_rule() {
        let to = recipients(&["ana@example.com".into(), "Bo <bo@example.com>".into()]).unwrap();
        let firing =
            message(&relay(), &to, &notification(Transition::Firing), "https://b.example").unwrap();
        let raw = String::from_utf8(firing.formatted()).unwrap();
        assert!(
            raw.contains("Subject: [Boardsmith] Firing: Funding above 0.05% [BTCUSDT]"),
            "{raw}"
        );
        let id = format!("Message-ID: <{}@example.com>", id_part("d1/funding/BTCUSDT/2"));
        let thread = format!("<{}@example.com>", id_part("d1/funding/BTCUSDT"));
        assert!(id.starts_with("Message-ID: <d1.funding.BTCUSDT.2."), "{id}");
        assert!(raw.contains(&id), "{raw}");
        assert!(raw.contains(&format!("References: {thread}")), "{raw}");
        assert!(!raw.contains("In-Reply-To"), "a firing mail starts its thread");
        assert!(raw.contains("To: ana@example.com, Bo <bo@example.com>"), "{raw}");
        assert!(raw.contains("Value: 0.0007\r\n"), "no float noise: {raw}");
        assert!(raw.contains("Open the dashboard: https://b.example/#/d/d1"), "{raw}");
        assert!(raw.contains("Perps &lt;desk&gt;"), "the HTML part escapes: {raw}");
        let resolved =
            message(&relay(), &to, &notification(Transition::Resolved), "").unwrap().formatted();
        let raw = String::from_utf8(resolved).unwrap();
        assert!(raw.contains(&format!("In-Reply-To: {thread}")), "{raw}");
    }

    #[test]
    fn message_ids_are_dot_atoms_and_never_shared() {
        let a = id_part("d1/rule//3");
        assert!(a.starts_with("d1.rule.3."), "no empty runs: {a}");
        assert!(!a.contains("..") && !a.starts_with('.') && !a.ends_with('.'), "{a}");
        assert_ne!(id_part("d1/r/BTC USDT/1"), id_part("d1/r/BTC/USDT/1"), "alike, not equal");
        assert!(
            id_part("d/r/\u{e9}t\u{e9} <x>/1")
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        );
    }

    #[test]
    fn bad_addresses_are_named() {
        let e = recipients(&["ana@example.com".into(), "not an address".into()]).unwrap_err();
        assert!(e.to_string().starts_with("to[1]: `not an address`"), "{e}");
        assert!(recipients(&[]).is_err());
        let mut r = relay();
        r.from = "nobody".into();
        let to = recipients(&["ana@example.com".into()]).unwrap();
        let e = message(&r, &to, &notification(Transition::Firing), "").unwrap_err();
        assert!(e.to_string().starts_with("from: `nobody`"), "{e}");
    }
}
