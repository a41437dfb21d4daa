//! The `http` backing: URL template, query/header mapping, auth from an environment variable,
//! timeout, retry with exponential backoff and jitter (on `backon`), and declarative response
//! mapping ([`mapping`]).
//!
//! A spec's `url` is absolute (`https://api.binance.com/api/v3/klines`); placeholders may only
//! follow its path's first `/`, so no param can change the scheme, host or port. Its origin can
//! be replaced at run time for proxies or tests: by the environment variable named in
//! `baseUrlEnv`, or in code with [`HttpBacking::set_origin`].
//!
//! Every request goes through [`Client`], which applies the [`outbound`] policy (allowed hosts,
//! no private addresses) before sending, on each redirect hop and when a name resolves.

pub mod convert;
pub mod expr;
pub mod mapping;
pub mod outbound;
pub mod template;
pub mod tenor;
pub mod transform;
pub mod xbrl;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use base::outage::Cause;
use rand::Rng;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use convert::Conv;
use mapping::snippet;
pub use mapping::{BodyFormat, Entries, Field, FieldList, ResponseMap};
pub use outbound::{AllowedHost, Outbound, Refused};

/// Default per-attempt timeout.
pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;
/// Default number of retries after the first attempt.
pub const DEFAULT_RETRIES: u32 = 2;
/// Default first backoff delay; doubles on each retry, plus up to 50% jitter.
pub const DEFAULT_RETRY_BASE_MS: u64 = 300;
/// Largest response body accepted.
pub const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;
/// Connect timeout of the shared client.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How a method maps onto an HTTP endpoint.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HttpBacking {
    /// Absolute URL with `{param}` placeholders (percent-encoded into the path; a missing
    /// optional param becomes empty).
    pub url: String,
    /// HTTP method (default `GET`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Query parameters: name → template. A pair whose template references an absent param is
    /// omitted.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub query: BTreeMap<String, String>,
    /// Extra request headers: name → template (omitted if a referenced param is absent).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Credential taken from an environment variable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<Box<Auth>>,
    /// Environment variable that, when set, replaces the URL's origin (`scheme://host[:port]`,
    /// optionally with a path prefix): for proxies and mirrors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url_env: Option<String>,
    /// Per-attempt timeout in milliseconds (default [`DEFAULT_TIMEOUT_MS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Retries on connect errors, timeouts, 429 and 5xx (default [`DEFAULT_RETRIES`]); other
    /// 4xx, and a name that does not resolve, are never retried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries: Option<u32>,
    /// First backoff delay in milliseconds (default [`DEFAULT_RETRY_BASE_MS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_base_ms: Option<u64>,
    /// How the JSON body becomes the result (default: as is).
    #[serde(default)]
    pub response: Box<ResponseMap>,
    /// Fetch every page of a paged answer (rows of all pages are mapped together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paginate: Option<Paginate>,
    /// Look a value up in a list the provider publishes before the call (SEC: a ticker's CIK).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lookup: Option<Box<Lookup>>,
}

/// A lookup before the call: fetch a list (kept for `ttlSecs`), find the entry whose fields
/// equal the `match` templates (case-insensitive), and copy fields of it into the call's params
/// (`set`: param → entry field), for the URL and mapping to use.
///
/// ```json
/// "lookup": {"url": "https://www.sec.gov/files/company_tickers.json",
///            "match": {"ticker": "{symbol}"}, "set": {"cik": "cik_str"}}
/// ```
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Lookup {
    /// The list's absolute URL (its origin follows the backing's base-URL variable too).
    pub url: String,
    /// Dot path of the entries in the list (an array, or an object whose values are entries).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub select: Option<String>,
    /// Entry field → the template it must equal.
    #[serde(rename = "match")]
    pub matches: BTreeMap<String, String>,
    /// Param → the entry field whose value it takes.
    pub set: BTreeMap<String, String>,
    /// How long the list is kept, in seconds (default a day).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_secs: Option<u64>,
}

/// Page-numbered pagination: the page number goes in a query parameter, the body says how many
/// pages there are.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Paginate {
    /// The query parameter carrying the page number (`page`, `page[number]`).
    pub param: String,
    /// Number of the first page (default 1); the first request may omit the param.
    #[serde(default = "first_page")]
    pub first: u32,
    /// Dot path to the total number of pages in a body (`meta.total-pages`, `0.pages`).
    pub total_pages: String,
    /// Most pages fetched per call (default 10, at most [`MAX_PAGES`]).
    #[serde(default = "max_pages")]
    pub max_pages: u32,
}

fn first_page() -> u32 {
    1
}

fn max_pages() -> u32 {
    10
}

/// A credential from the environment, sent as a header or a query parameter.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Auth {
    /// Environment variable holding the secret.
    pub env: String,
    /// Header to send it in (e.g. `X-Key`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<String>,
    /// Query parameter to send it in (e.g. `apikey`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// Prepended to the value (e.g. `"Bearer "`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// When true, the call proceeds without the credential if the variable is unset.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub optional: bool,
}

impl HttpBacking {
    /// Replaces the URL's origin (`scheme://host[:port]`) with `origin`, which may carry a path
    /// prefix (`http://127.0.0.1:8080/binance`). Used for tests and proxies.
    pub fn set_origin(&mut self, origin: &str) {
        self.url = rebase(&self.url, origin);
    }
}

fn rebase(url: &str, origin: &str) -> String {
    let origin = origin.trim_end_matches('/');
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let path_start = url[after_scheme..].find('/').map_or(url.len(), |i| after_scheme + i);
    format!("{origin}{}", &url[path_start..])
}

/// The shared HTTP client and the outbound policy it enforces.
#[derive(Debug, Clone)]
pub struct Client {
    inner: reqwest::Client,
    outbound: Arc<Outbound>,
    /// Lists fetched by lookups, by URL: when fetched, and the parsed body.
    lists: Arc<std::sync::Mutex<Lists>>,
}

impl Client {
    /// A client enforcing `outbound` with the system resolver.
    pub fn new(outbound: Outbound) -> Result<Self, String> {
        Self::with_lookup(outbound, outbound::system_lookup())
    }

    /// A client enforcing `outbound`, resolving names with `lookup` (tests use a fixed table).
    /// Connect timeout, user agent, rustls; the resolver drops non-public addresses, each
    /// redirect hop is checked, and the `HTTP(S)_PROXY` variables are ignored (a proxy would
    /// resolve names where the policy cannot see them: use a source's `baseUrlEnv` instead).
    pub fn with_lookup(outbound: Outbound, lookup: outbound::Lookup) -> Result<Self, String> {
        let outbound = Arc::new(outbound);
        let inner = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .user_agent(concat!("boardsmith/", env!("CARGO_PKG_VERSION")))
            .no_proxy()
            .dns_resolver(Arc::new(outbound::Resolver::new(Arc::clone(&outbound), lookup)))
            .redirect(outbound.redirect_policy())
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(Self { inner, outbound, lists: Arc::default() })
    }
}

/// A page fetched for a reader (a knowledge-base document): its type and bytes.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The final URL (after redirects).
    pub url: String,
    /// The `Content-Type` it was served with, if any.
    pub content_type: Option<String>,
    /// The body, at most the limit asked for.
    pub bytes: bytes::Bytes,
}

impl Client {
    /// GETs `url` under the same outbound policy as every backing (allowed hosts, no
    /// non-public address unless configured, each redirect hop checked), within `timeout`
    /// and `max_bytes` (a longer body is an error, not a truncation).
    #[base::boxed]
    pub async fn get_document(
        &self,
        url: &str,
        max_bytes: usize,
        timeout: Duration,
    ) -> Result<Fetched, Error> {
        let parsed = self.check_url(url)?;
        let label = format!("{}{}", parsed.host_str().unwrap_or_default(), parsed.path());
        let work = async {
            let resp =
                self.inner.get(parsed.clone()).send().await.map_err(|e| match refusal(&e) {
                    Some(r) => Error::Refused(r),
                    None => Error::Unavailable(
                        format!("{label}: {}", root_cause(&e)),
                        Cause::Unreachable,
                    ),
                })?;
            let status = resp.status();
            if !status.is_success() {
                return Err(Error::Upstream(format!("{label}: HTTP {}", status.as_u16())));
            }
            if resp.content_length().is_some_and(|n| n > max_bytes as u64) {
                return Err(Error::Upstream(format!("{label}: larger than {max_bytes} bytes")));
            }
            let final_url = resp.url().to_string();
            let content_type = resp
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let mut body = Vec::new();
            let mut stream = resp.bytes_stream();
            while let Some(chunk) = futures::StreamExt::next(&mut stream).await {
                let chunk = chunk
                    .map_err(|e| Error::Unavailable(format!("{label}: {e}"), Cause::Unreachable))?;
                if body.len() + chunk.len() > max_bytes {
                    return Err(Error::Upstream(format!("{label}: larger than {max_bytes} bytes")));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(Fetched { url: final_url, content_type, bytes: body.into() })
        };
        tokio::time::timeout(timeout, work).await.map_err(|_| {
            Error::Unavailable(
                format!("{label}: no complete answer within {timeout:?}"),
                Cause::Timeout,
            )
        })?
    }
}

impl Client {
    /// `url` parsed, if it may be requested under the outbound policy (scheme, allowed host,
    /// an IP literal's address); names are checked again when they resolve.
    pub fn check_url(&self, url: &str) -> Result<reqwest::Url, Error> {
        let parsed = reqwest::Url::parse(url)
            .map_err(|e| Error::Upstream(format!("`{url}` is not a URL: {e}")))?;
        self.outbound.check(&parsed, false)?;
        Ok(parsed)
    }

    /// POSTs a JSON `body` with `headers` under the same outbound policy as every backing,
    /// within `timeout`; answers the status (any), the error when it could not be sent.
    #[base::boxed]
    pub async fn post_json(
        &self,
        url: &str,
        body: Vec<u8>,
        headers: Vec<(String, String)>,
        timeout: Duration,
    ) -> Result<u16, Error> {
        let parsed = self.check_url(url)?;
        let label = parsed.host_str().unwrap_or_default().to_owned();
        let mut req = self
            .inner
            .post(parsed)
            .timeout(timeout)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        for (k, v) in headers {
            req = req.header(k, v);
        }
        let resp = req.send().await.map_err(|e| match refusal(&e) {
            Some(r) => Error::Refused(r),
            None if e.is_timeout() => {
                Error::Unavailable(format!("{label}: no answer within {timeout:?}"), Cause::Timeout)
            }
            None => Error::Unavailable(format!("{label}: {}", root_cause(&e)), Cause::Unreachable),
        })?;
        Ok(resp.status().as_u16())
    }
}

/// Lists fetched by lookups: URL → (when fetched, parsed body).
type Lists = std::collections::HashMap<String, (std::time::Instant, Arc<Value>)>;

/// Why a call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// The outbound policy refused the request (or a redirect, or the resolved address).
    #[error(transparent)]
    Refused(#[from] Refused),
    /// The provider failed on its side, after the retries: network, timeout, 429, 5xx, or 451
    /// (it refuses this region). These count towards its circuit breaker.
    #[error("{0}")]
    Unavailable(String, Cause),
    /// The provider is to blame but is not down: it refused the credential, its rate limit
    /// here would wait too long, or its answer does not read as documented.
    #[error("{0}")]
    Failed(String, Cause),
    /// Anything else: spec, a missing credential, a request it rejected.
    #[error("{0}")]
    Upstream(String),
}

/// Longest a call waits for its turn under a provider's rate limit before failing instead.
pub const MAX_PACE_WAIT: Duration = Duration::from_secs(5);

/// A prepared request: URL, headers, and the label (host + path, never the query) used in
/// messages.
#[derive(Clone)]
struct Prepared {
    method: reqwest::Method,
    url: reqwest::Url,
    headers: HeaderMap,
    label: String,
}

fn prepare(
    backing: &HttpBacking,
    params: &Map<String, Value>,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
) -> Result<Prepared, String> {
    let mut url_text = template::expand_lenient(&backing.url, params, &template::encode_path);
    if let Some(var) = &backing.base_url_env
        && let Some(base) = env(var).filter(|v| !v.trim().is_empty())
    {
        url_text = rebase(&url_text, base.trim());
    }
    let mut url = reqwest::Url::parse(&url_text)
        .map_err(|e| format!("invalid URL in spec (`{}`): {e}", backing.url))?;
    let label = format!(
        "{}{}{}",
        url.host_str().unwrap_or_default(),
        url.port().map(|p| format!(":{p}")).unwrap_or_default(),
        url.path()
    );
    let mut headers = HeaderMap::new();
    {
        let mut pairs = url.query_pairs_mut();
        for (name, tpl) in &backing.query {
            if let Some(v) = template::expand(tpl, params, &|s| s.to_owned()) {
                pairs.append_pair(name, &v);
            }
        }
        if let Some(auth) = &backing.auth {
            match env(&auth.env).filter(|v| !v.is_empty()) {
                Some(secret) => {
                    let value = format!("{}{secret}", auth.prefix.as_deref().unwrap_or_default());
                    if let Some(q) = &auth.query {
                        pairs.append_pair(q, &value);
                    }
                    if let Some(h) = &auth.header {
                        let name = HeaderName::from_bytes(h.as_bytes())
                            .map_err(|_| format!("invalid auth header name `{h}` in spec"))?;
                        let mut v = HeaderValue::from_str(&value).map_err(|_| {
                            format!("the value of {} is not a valid HTTP header value", auth.env)
                        })?;
                        v.set_sensitive(true);
                        headers.insert(name, v);
                    }
                }
                None if auth.optional => {}
                None => {
                    let via = match (&auth.header, &auth.query) {
                        (Some(h), _) => format!(" (sent as header `{h}`)"),
                        (None, Some(q)) => format!(" (sent as query parameter `{q}`)"),
                        (None, None) => String::new(),
                    };
                    return Err(format!(
                        "{label} needs an API key: the environment variable {} is not set{via}; \
                         ask the user to set it and restart",
                        auth.env
                    ));
                }
            }
        }
    }
    if url.query() == Some("") {
        url.set_query(None);
    }
    for (name, tpl) in &backing.headers {
        if let Some(v) = template::expand(tpl, params, &|s| s.to_owned()) {
            let n = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("invalid header name `{name}` in spec"))?;
            let v = HeaderValue::from_str(&v)
                .map_err(|_| format!("header `{name}`: value is not a valid HTTP header value"))?;
            headers.insert(n, v);
        }
    }
    let method = backing.method.as_deref().unwrap_or("GET");
    let method = reqwest::Method::from_bytes(method.to_ascii_uppercase().as_bytes())
        .map_err(|_| format!("invalid HTTP method `{method}` in spec"))?;
    Ok(Prepared { method, url, headers, label })
}

/// One failed attempt.
#[derive(Clone)]
struct Failure {
    message: String,
    retryable: bool,
    /// Set when the provider is to blame; a transient cause (it is down, slow, overloaded or
    /// refuses this region) counts towards its breaker, as opposed to a request it rejected.
    cause: Option<Cause>,
    /// Server-requested delay (`Retry-After` seconds), if any.
    retry_after: Option<Duration>,
    /// Set when the outbound policy stopped the attempt (never retried).
    refused: Option<Refused>,
}

/// Performs the call: builds the request, retries transient failures, parses the JSON body and
/// applies the response mapping. Errors name the status, host/path (never the query, which may
/// hold a key) and what was malformed.
///
/// The URL is checked against the client's outbound policy first: a refused request is never
/// sent, and a refusal at connect time or on a redirect is not retried.
///
/// With a `pace` bucket (the provider's rate limit) each attempt waits its turn, at most
/// [`MAX_PACE_WAIT`], and a `Retry-After` holds the bucket for every caller.
#[base::boxed]
pub async fn fetch(
    client: &Client,
    backing: &HttpBacking,
    params: &Map<String, Value>,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
    pace: Option<&crate::limit::Bucket>,
) -> Result<Value, Error> {
    let looked_up;
    let params = match &backing.lookup {
        Some(l) => {
            looked_up = look_up(client, backing, l, params, env, pace).await?;
            &looked_up
        }
        None => params,
    };
    let req = prepare(backing, params, env).map_err(Error::Upstream)?;
    client.outbound.check(&req.url, false)?;
    let body = send(client, backing, &req, pace).await?;
    let format = backing.response.format;
    let mut json = mapping::parse_body(format, &body, &req.label).map_err(bad_answer)?;
    if let Some(pages) = &backing.paginate {
        let total = mapping::select(&json, &pages.total_pages)
            .ok()
            .and_then(|v| convert::to_number(v)?.as_u64())
            .ok_or_else(|| {
                bad_answer(format!(
                    "response from {}: expected the page count at `{}`",
                    req.label, pages.total_pages
                ))
            })?;
        let last = u64::from(pages.first)
            .saturating_add(total.saturating_sub(1))
            .min(u64::from(pages.first) + u64::from(pages.max_pages.clamp(1, MAX_PAGES)) - 1);
        let select = backing.response.select.as_deref().unwrap_or_default();
        let select = template::expand_plain(select, params);
        for page in u64::from(pages.first) + 1..=last {
            let mut next = Prepared { url: req.url.clone(), ..req.clone() };
            let kept: Vec<(String, String)> = next
                .url
                .query_pairs()
                .filter(|(k, _)| k != &pages.param)
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect();
            next.url
                .query_pairs_mut()
                .clear()
                .extend_pairs(kept)
                .append_pair(&pages.param, &page.to_string());
            let body = send(client, backing, &next, pace).await?;
            let more = mapping::parse_body(format, &body, &req.label).map_err(bad_answer)?;
            mapping::append_page(&mut json, &more, &select)
                .map_err(|e| bad_answer(format!("response from {} page {page}: {e}", req.label)))?;
        }
    }
    mapping::apply(&backing.response, &json, params, &req.label).map_err(bad_answer)
}

/// The provider's answer does not read as its documented response.
fn bad_answer(message: String) -> Error {
    Error::Failed(message, Cause::BadAnswer)
}

/// `params` plus the fields a lookup copies from the matching entry of its list.
async fn look_up(
    client: &Client,
    backing: &HttpBacking,
    l: &Lookup,
    params: &Map<String, Value>,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
    pace: Option<&crate::limit::Bucket>,
) -> Result<Map<String, Value>, Error> {
    let list_backing = HttpBacking {
        url: l.url.clone(),
        method: None,
        query: BTreeMap::new(),
        response: Box::default(),
        paginate: None,
        lookup: None,
        ..backing.clone()
    };
    let req = prepare(&list_backing, params, env).map_err(Error::Upstream)?;
    let ttl = Duration::from_secs(l.ttl_secs.unwrap_or(86_400));
    let key = req.url.to_string();
    let cached = {
        let lists = client.lists.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        lists.get(&key).filter(|(at, _)| at.elapsed() < ttl).map(|(_, v)| Arc::clone(v))
    };
    let list = match cached {
        Some(v) => v,
        None => {
            client.outbound.check(&req.url, false)?;
            let body = send(client, &list_backing, &req, pace).await?;
            let v = Arc::new(
                mapping::parse_body(BodyFormat::Json, &body, &req.label)
                    .map_err(Error::Upstream)?,
            );
            let mut lists = client.lists.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            // A few fixed lists in practice; a template in a lookup URL must not grow it forever.
            if lists.len() >= 64 {
                lists.clear();
            }
            lists.insert(key, (std::time::Instant::now(), Arc::clone(&v)));
            v
        }
    };
    let select = template::expand_plain(l.select.as_deref().unwrap_or_default(), params);
    let entries: Vec<&Value> = match mapping::select(&list, &select)
        .map_err(|e| Error::Upstream(format!("list from {}: {e}", req.label)))?
    {
        Value::Array(items) => items.iter().collect(),
        Value::Object(o) => o.values().collect(),
        other => {
            return Err(Error::Upstream(format!(
                "list from {}: expected entries, got {}",
                req.label,
                convert::describe(other)
            )));
        }
    };
    let wanted: Vec<(&String, String)> =
        l.matches.iter().map(|(field, tpl)| (field, template::expand_plain(tpl, params))).collect();
    let found = entries.into_iter().find(|e| {
        wanted.iter().all(|(field, want)| {
            mapping::select(e, field)
                .is_ok_and(|v| template::format_value(v).eq_ignore_ascii_case(want.trim()))
        })
    });
    let Some(entry) = found else {
        let what: Vec<String> = wanted.iter().map(|(f, v)| format!("{f} = {v}")).collect();
        return Err(Error::Upstream(format!(
            "{} lists no entry with {}: check the symbol",
            req.label,
            what.join(" and ")
        )));
    };
    let mut out = params.clone();
    for (param, field) in &l.set {
        let v = mapping::select(entry, field)
            .map_err(|e| Error::Upstream(format!("list from {}: {e}", req.label)))?;
        out.insert(param.clone(), v.clone());
    }
    Ok(out)
}

/// Most pages one call fetches.
pub const MAX_PAGES: u32 = 50;

/// Longest a `Retry-After` makes one retry wait (a longer one still holds the pace bucket).
const MAX_RETRY_AFTER_WAIT: Duration = Duration::from_secs(10);

/// Why one attempt of [`send`] produced no body.
enum Stop {
    /// The provider's rate limit would have it wait past [`MAX_PACE_WAIT`]: never retried.
    Paced(Error),
    /// The request failed.
    Failed(Failure),
}

/// Sends one prepared request with retries (transient failures, honouring `Retry-After`) and the
/// provider's pace; the body of the first success.
async fn send(
    client: &Client,
    backing: &HttpBacking,
    req: &Prepared,
    pace: Option<&crate::limit::Bucket>,
) -> Result<Vec<u8>, Error> {
    let timeout = Duration::from_millis(backing.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS));
    let retries = backing.retries.unwrap_or(DEFAULT_RETRIES);
    let base = Duration::from_millis(backing.retry_base_ms.unwrap_or(DEFAULT_RETRY_BASE_MS));
    retrying(retries, base, &req.label, pace, || attempt_once(&client.inner, req, timeout)).await
}

/// Runs `attempt` (each one waiting its turn under `pace`) until it succeeds, fails for good, or
/// `retries` retries are spent. Retry `n` (from 0) waits `base·2^min(n,16)` plus up to half of
/// that again, and at least the `Retry-After` the provider sent (at most
/// [`MAX_RETRY_AFTER_WAIT`]), which also holds `pace` for every caller.
async fn retrying<F, Fut>(
    retries: u32,
    base: Duration,
    label: &str,
    pace: Option<&crate::limit::Bucket>,
    mut attempt: F,
) -> Result<Vec<u8>, Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Vec<u8>, Failure>>,
{
    use backon::Retryable;
    use std::sync::atomic::{AtomicU32, Ordering};

    let made = AtomicU32::new(0);
    let once = || {
        made.fetch_add(1, Ordering::Relaxed);
        let sent = attempt();
        async move {
            if let Some(bucket) = pace {
                match bucket.reserve(std::time::Instant::now(), MAX_PACE_WAIT) {
                    Ok(wait) if wait.is_zero() => {}
                    Ok(wait) => tokio::time::sleep(wait).await,
                    Err(wait) => {
                        return Err(Stop::Paced(Error::Failed(
                            format!(
                                "{label}: too many requests to this provider right now (its rate \
                                 limit); try again in {} s",
                                wait.as_secs().max(1)
                            ),
                            Cause::RateLimited,
                        )));
                    }
                }
            }
            let outcome = sent.await;
            if let (Some(bucket), Err(Failure { retry_after: Some(ra), .. })) = (pace, &outcome) {
                bucket.hold(std::time::Instant::now() + *ra);
            }
            outcome.map_err(Stop::Failed)
        }
    };
    let outcome = once
        .retry(backoff(retries, base))
        .when(|stop| matches!(stop, Stop::Failed(f) if f.retryable))
        .adjust(|stop, delay| match stop {
            Stop::Failed(f) => delay.map(|d| wait(d, f.retry_after)),
            Stop::Paced(_) => delay,
        })
        .notify(|stop, delay| {
            if let Stop::Failed(f) = stop {
                let attempt = made.load(Ordering::Relaxed).saturating_sub(1);
                tracing::debug!(target: "sdk::http", url = %label, attempt, ?delay, "retrying: {}", f.message);
            }
        })
        .await;
    match outcome {
        Ok(body) => Ok(body),
        Err(Stop::Paced(e)) => Err(e),
        Err(Stop::Failed(Failure { refused: Some(r), .. })) => Err(Error::Refused(r)),
        Err(Stop::Failed(f)) => {
            let made = made.load(Ordering::Relaxed);
            let tries =
                if made > 1 { format!(" (gave up after {made} attempts)") } else { String::new() };
            let message = format!("{}{tries}", f.message);
            Err(match f.cause {
                Some(c) if c.transient() => Error::Unavailable(message, c),
                Some(c) => Error::Failed(message, c),
                None => Error::Upstream(message),
            })
        }
    }
}

/// `retries` delays: `base`, doubling up to `base·2^16`. Without backon's jitter, which adds up
/// to 100% of the delay: ours adds up to 50% (in [`wait`]).
fn backoff(retries: u32, base: Duration) -> backon::ExponentialBuilder {
    backon::ExponentialBuilder::new()
        .with_min_delay(base)
        .with_max_delay(base.saturating_mul(1 << 16))
        .with_max_times(usize::try_from(retries).unwrap_or(usize::MAX))
}

/// The wait before a retry: the backoff (rounded to whole milliseconds, as backon doubles it in
/// `f32`) plus up to 50% jitter, and at least the provider's `Retry-After`, capped.
fn wait(backoff: Duration, retry_after: Option<Duration>) -> Duration {
    let ms =
        u64::try_from(backoff.as_nanos().saturating_add(500_000) / 1_000_000).unwrap_or(u64::MAX);
    let jitter = rand::rng().random_range(0..=ms / 2);
    let delay = Duration::from_millis(ms.saturating_add(jitter));
    retry_after.map_or(delay, |ra| delay.max(ra.min(MAX_RETRY_AFTER_WAIT)))
}

/// The endpoint a call of `backing` with `params` reaches: scheme, host and path (never the
/// query, which may carry a key), as [`base::provenance::Provenance::url`] shows it.
pub fn endpoint(
    backing: &HttpBacking,
    params: &Map<String, Value>,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
) -> Option<String> {
    let req = prepare(backing, params, env).ok()?;
    // A path naming a value the call does not have (one a lookup supplies) is not shown half
    // filled: the host alone is.
    if template::expand(&backing.url, params, &|s| s.to_owned()).is_none() {
        return Some(format!("{}://{}", req.url.scheme(), req.url.authority()));
    }
    Some(format!("{}://{}", req.url.scheme(), req.label))
}

async fn attempt_once(
    client: &reqwest::Client,
    req: &Prepared,
    timeout: Duration,
) -> Result<Vec<u8>, Failure> {
    let label = &req.label;
    let transport = |e: reqwest::Error| {
        let secs = timeout.as_secs_f64();
        if let Some(r) = refusal(&e) {
            Failure {
                message: r.to_string(),
                retryable: false,
                cause: None,
                retry_after: None,
                refused: Some(r),
            }
        } else if e.is_timeout() {
            Failure {
                message: format!("request to {label} timed out (timeout {secs} s)"),
                retryable: true,
                cause: Some(Cause::Timeout),
                retry_after: None,
                refused: None,
            }
        } else if cause::<std::io::Error>(&e)
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
        {
            // Not retried either: nothing listens there, and a backoff would only make the
            // panel wait (the breaker decides when to try again).
            Failure {
                message: format!("request to {label} failed: connection refused"),
                retryable: false,
                cause: Some(Cause::Unreachable),
                retry_after: None,
                refused: None,
            }
        } else if let Some(dns) = cause::<outbound::NameNotResolved>(&e) {
            // Not retried: the resolver has just answered, and its answer would not change
            // within a backoff (the circuit breaker decides when to ask again).
            Failure {
                message: format!("request to {label} failed: {dns}"),
                retryable: false,
                cause: Some(Cause::Unreachable),
                retry_after: None,
                refused: None,
            }
        } else {
            Failure {
                message: format!("request to {label} failed: {}", root_cause(&e)),
                retryable: e.is_connect() || e.is_request() || e.is_body(),
                cause: Some(Cause::Unreachable),
                retry_after: None,
                refused: None,
            }
        }
    };
    let mut resp = client
        .request(req.method.clone(), req.url.clone())
        .headers(req.headers.clone())
        .timeout(timeout)
        .send()
        .await
        .map_err(transport)?;
    let status = resp.status();
    if let Some(len) = resp.content_length()
        && len > MAX_BODY_BYTES as u64
    {
        return Err(too_large(label));
    }
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(transport)? {
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(too_large(label));
        }
        body.extend_from_slice(&chunk);
    }
    if status.is_success() {
        return Ok(body);
    }
    let retry_after = resp
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    let code = status.as_u16();
    Err(Failure {
        message: format!(
            "HTTP {code} {} from {label}: {}",
            status.canonical_reason().unwrap_or(""),
            snippet(&body)
        ),
        retryable: code == 429 || status.is_server_error(),
        cause: match code {
            429 => Some(Cause::RateLimited),
            401 | 403 => Some(Cause::BadKey),
            451 | 500..=599 => Some(Cause::ServerError),
            _ => None,
        },
        retry_after,
        refused: None,
    })
}

fn too_large(label: &str) -> Failure {
    Failure {
        message: format!("response from {label} is larger than {} MiB", MAX_BODY_BYTES >> 20),
        retryable: false,
        cause: Some(Cause::BadAnswer),
        retry_after: None,
        refused: None,
    }
}

/// The error of type `T` somewhere in a transport error's chain of causes: the outbound
/// policy's [`Refused`] or a failed name lookup travel inside reqwest's and hyper's errors.
fn cause<T: std::error::Error + 'static>(e: &reqwest::Error) -> Option<&T> {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(found) = err.downcast_ref::<T>() {
            return Some(found);
        }
        cur = err.source();
    }
    None
}

/// The outbound refusal behind a transport error (from the resolver or the redirect policy).
fn refusal(e: &reqwest::Error) -> Option<Refused> {
    cause::<Refused>(e).cloned()
}

/// The innermost error message (reqwest's own text would include the full URL).
fn root_cause(e: &reqwest::Error) -> String {
    let mut msg = e.to_string();
    let mut cur: Option<&dyn std::error::Error> = std::error::Error::source(e);
    while let Some(s) = cur {
        msg = s.to_string();
        cur = s.source();
    }
    if e.url().is_some() && msg == e.to_string() {
        // No inner cause: strip the URL reqwest appends.
        return e.to_string().split(" for url").next().unwrap_or_default().to_owned();
    }
    msg
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rebase_keeps_path() {
        assert_eq!(
            rebase("https://api.x.com/a/b?c=1", "http://127.0.0.1:9/"),
            "http://127.0.0.1:9/a/b?c=1"
        );
        assert_eq!(rebase("https://api.x.com", "http://h"), "http://h");
    }

    #[test]
    fn prepare_builds_url_without_leaking_key_in_label() {
        let b: HttpBacking = serde_json::from_value(json!({
            "url": "https://api.x.com/coins/{id}/chart",
            "query": {"days": "{days}", "opt": "{missing}", "sym": "{id|upper}"},
            "auth": {"env": "K", "query": "apikey"}
        }))
        .unwrap();
        let p = json!({"id": "bit coin", "days": 30});
        let env = |k: &str| (k == "K").then(|| "s3cret".to_owned());
        let r = prepare(&b, p.as_object().unwrap(), &env).unwrap();
        assert_eq!(
            r.url.as_str(),
            "https://api.x.com/coins/bit%20coin/chart?days=30&sym=BIT+COIN&apikey=s3cret"
        );
        assert_eq!(r.label, "api.x.com/coins/bit%20coin/chart");
        let e = prepare(&b, p.as_object().unwrap(), &|_| None).err().unwrap();
        assert!(e.contains("environment variable K is not set"), "{e}");
    }

    fn failure(retryable: bool, retry_after: Option<Duration>) -> Failure {
        Failure {
            message: "HTTP 503 from x.com/a".to_owned(),
            retryable,
            cause: Some(Cause::ServerError),
            retry_after,
            refused: None,
        }
    }

    /// Runs [`retrying`] over canned outcomes (the last repeats); the result and the attempts.
    async fn run(
        retries: u32,
        base_ms: u64,
        pace: Option<&crate::limit::Bucket>,
        outcomes: Vec<Result<Vec<u8>, Failure>>,
    ) -> (Result<Vec<u8>, Error>, usize) {
        let outcomes = std::sync::Mutex::new(std::collections::VecDeque::from(outcomes));
        let made = std::sync::atomic::AtomicUsize::new(0);
        let base = Duration::from_millis(base_ms);
        let (outcomes, made_ref) = (&outcomes, &made);
        let result = retrying(retries, base, "x.com/a", pace, || async move {
            made_ref.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut o = outcomes.lock().unwrap();
            if o.len() > 1 { o.pop_front().unwrap() } else { o.front().unwrap().clone() }
        })
        .await;
        (result, made.into_inner())
    }

    #[tokio::test]
    async fn retries_then_gives_up_naming_the_attempts() {
        let (r, made) = run(2, 1, None, vec![Err(failure(true, None))]).await;
        assert_eq!(made, 3);
        assert_eq!(
            r.unwrap_err(),
            Error::Unavailable(
                "HTTP 503 from x.com/a (gave up after 3 attempts)".into(),
                Cause::ServerError
            )
        );
        let (r, made) = run(2, 1, None, vec![Err(failure(true, None)), Ok(b"ok".to_vec())]).await;
        assert_eq!((r.unwrap(), made), (b"ok".to_vec(), 2));
        // Not retryable: one attempt, no count in the message; not the provider's fault.
        let mut rejected = failure(false, None);
        rejected.cause = None;
        let (r, made) = run(2, 1, None, vec![Err(rejected)]).await;
        assert_eq!((r.unwrap_err(), made), (Error::Upstream("HTTP 503 from x.com/a".into()), 1));
        // No retries configured: one attempt.
        let (r, made) = run(0, 1, None, vec![Err(failure(true, None))]).await;
        let down = Error::Unavailable("HTTP 503 from x.com/a".into(), Cause::ServerError);
        assert_eq!((r.unwrap_err(), made), (down, 1));
    }

    #[test]
    fn the_backoff_doubles_from_the_base_up_to_2_pow_16_times_it() {
        use backon::BackoffBuilder;
        let delays: Vec<u64> = backoff(20, Duration::from_millis(300))
            .build()
            .map(|d| wait(d, Some(Duration::ZERO)).as_millis() as u64)
            .collect();
        assert_eq!(delays.len(), 20);
        for (n, ms) in delays.into_iter().enumerate() {
            let backoff = 300u64 << n.min(16);
            assert!((backoff..=backoff + backoff / 2).contains(&ms), "retry {n}: {ms} ms");
        }
        assert_eq!(backoff(0, Duration::from_millis(300)).build().next(), None);
        let zero: Vec<Duration> = backoff(3, Duration::ZERO).build().collect();
        assert_eq!(zero, vec![Duration::ZERO; 3]);
    }

    #[test]
    fn the_wait_doubles_with_up_to_half_jitter_and_honours_retry_after() {
        for _ in 0..200 {
            let w = wait(Duration::from_millis(300), None);
            assert!((300..=450).contains(&w.as_millis()), "{w:?}");
            // backon doubles in f32: a delay a hair off a whole millisecond is rounded.
            let w = wait(Duration::from_nanos(599_999_990), None);
            assert!((600..=900).contains(&w.as_millis()), "{w:?}");
            let w = wait(Duration::from_millis(300), Some(Duration::from_secs(3)));
            assert_eq!(w, Duration::from_secs(3), "Retry-After longer than the backoff wins");
            let w = wait(Duration::from_millis(300), Some(Duration::from_millis(10)));
            assert!((300..=450).contains(&w.as_millis()), "a shorter one does not: {w:?}");
            let w = wait(Duration::from_millis(300), Some(Duration::from_secs(3600)));
            assert_eq!(w, MAX_RETRY_AFTER_WAIT, "capped");
        }
    }

    #[tokio::test]
    async fn a_retry_after_longer_than_the_backoff_is_waited_out_and_holds_the_pace() {
        let bucket =
            crate::limit::Bucket::new(100, Duration::from_secs(1), std::time::Instant::now());
        let started = std::time::Instant::now();
        let ra = Some(Duration::from_millis(400));
        let outcomes = vec![Err(failure(true, ra)), Ok(b"ok".to_vec())];
        let (r, made) = run(2, 1, Some(&bucket), outcomes).await;
        assert_eq!((r.unwrap(), made), (b"ok".to_vec(), 2));
        assert!(started.elapsed() >= Duration::from_millis(400), "{:?}", started.elapsed());
        // The hold outlives the call for other callers (it ended just now).
        let wait = bucket.reserve(started, MAX_PACE_WAIT).unwrap();
        assert!(wait >= Duration::from_millis(390), "{wait:?}");
    }

    #[tokio::test]
    async fn a_retry_the_pace_cannot_fit_fails_at_once_without_a_count() {
        // One request a minute: the retry would wait ~60 s for its turn.
        let bucket =
            crate::limit::Bucket::new(1, Duration::from_secs(60), std::time::Instant::now());
        let (r, made) = run(2, 1, Some(&bucket), vec![Err(failure(true, None))]).await;
        assert_eq!(made, 1, "the retry is refused its turn before it is sent");
        let msg = r.unwrap_err().to_string();
        assert!(msg.starts_with("x.com/a: too many requests"), "{msg}");
        assert!(!msg.contains("gave up"), "{msg}");
    }

    /// Param values that try to change the authority.
    fn hostile_value() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let piece = prop_oneof![
            Just("@".to_owned()),
            Just("//".to_owned()),
            Just("\\".to_owned()),
            Just("%2f".to_owned()),
            Just("%2F%2F".to_owned()),
            Just("#".to_owned()),
            Just("?".to_owned()),
            Just(":".to_owned()),
            Just(".".to_owned()),
            Just("..".to_owned()),
            Just("[::1]".to_owned()),
            Just("127.0.0.1".to_owned()),
            Just("evil.example".to_owned()),
            Just("http://evil.example/".to_owned()),
            Just("%00".to_owned()),
            Just("\u{ff0f}".to_owned()),
            Just("\u{2025}".to_owned()),
            Just("\u{fe6b}".to_owned()),
            Just("\r\n".to_owned()),
            "\\PC{0,6}",
            ".{0,6}",
        ];
        proptest::collection::vec(piece, 0..6).prop_map(|v| v.concat())
    }

    /// URL templates built from pieces, placeholders anywhere (many are refused at load).
    fn any_template() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let scheme = proptest::sample::select(vec!["https://", "http://"]);
        let host = proptest::sample::select(vec![
            "api.x.com",
            "127.0.0.1",
            "[::1]",
            "x.com:8443",
            "u@x.com",
            "{a}",
            "{a}.x.com",
            "x.com{a}",
            "x.com:{b}",
            "",
        ]);
        let piece = proptest::sample::select(vec![
            ".",
            ":",
            "/",
            "//",
            "{a}",
            "{b|upper}",
            "@",
            "?",
            "#",
            "v1",
            "\\",
            "%2f",
            "x.com",
        ]);
        (scheme, host, proptest::collection::vec(piece, 0..6))
            .prop_map(|(s, h, rest)| format!("{s}{h}{}", rest.concat()))
    }

    /// `url` has `expected`'s scheme, host, port and user name.
    fn same_authority(
        url: &reqwest::Url,
        expected: &reqwest::Url,
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        proptest::prop_assert_eq!(url.scheme(), expected.scheme());
        proptest::prop_assert_eq!(url.host_str(), expected.host_str());
        proptest::prop_assert_eq!(url.port_or_known_default(), expected.port_or_known_default());
        proptest::prop_assert_eq!(url.username(), expected.username());
        Ok(())
    }

    proptest::proptest! {
        /// No param value can change the scheme, host or port of a request: placeholders only
        /// follow the path's first `/`, and values are percent-encoded (path) or form-encoded
        /// (query).
        #[test]
        fn params_never_change_the_authority(
            a in hostile_value(),
            b in hostile_value(),
            base in proptest::option::of(proptest::prop_oneof![
                proptest::strategy::Just("http://127.0.0.1:9/prefix"),
                proptest::strategy::Just("https://mirror.example"),
            ]),
        ) {
            for tpl in [
                "https://api.x.com/{a}",
                "https://api.x.com/{a}{b}",
                "https://api.x.com:8443/v1/{a}/{b|upper}/chart",
                "https://api.frankfurter.dev/v1/{a}..{b}",
                "http://[::1]:9000/{a}?x={b}",
            ] {
                let backing: HttpBacking = serde_json::from_value(serde_json::json!({
                    "url": tpl,
                    "query": {"q": "{a}", "r": "{b|lower}"},
                    "baseUrlEnv": "BASE",
                }))
                .unwrap();
                let params = serde_json::json!({"a": a, "b": b});
                let env = |k: &str| (k == "BASE").then(|| base.map(str::to_owned)).flatten();
                let expected = match base {
                    Some(b) => reqwest::Url::parse(b).unwrap(),
                    None => template::literal_origin(tpl).unwrap(),
                };
                let req = prepare(&backing, params.as_object().unwrap(), &env);
                let req = req.map_err(proptest::test_runner::TestCaseError::fail)?;
                same_authority(&req.url, &expected)?;
                proptest::prop_assert_eq!(req.url.password(), None);
            }
        }

        /// Any template the spec loader accepts keeps its authority whatever the params.
        #[test]
        fn accepted_templates_have_a_fixed_authority(
            tpl in any_template(),
            a in hostile_value(),
            b in hostile_value(),
        ) {
            let Ok(expected) = template::literal_origin(&tpl) else { return Ok(()) };
            let backing: HttpBacking =
                serde_json::from_value(serde_json::json!({ "url": tpl })).unwrap();
            let params = serde_json::json!({"a": a, "b": b});
            let req = prepare(&backing, params.as_object().unwrap(), &|_| None);
            let req = req.map_err(proptest::test_runner::TestCaseError::fail)?;
            same_authority(&req.url, &expected)?;
        }
    }
}
