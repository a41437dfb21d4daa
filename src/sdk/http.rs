//! The `http` backing: URL template, query/header mapping, auth from an environment variable,
//! response mapping, timeout and retry with backoff. (PLACEHOLDER: being implemented.)

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// How a method maps onto an HTTP endpoint.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct HttpBacking {
    /// URL with `{param}` placeholders.
    pub url: String,
}

/// The shared HTTP client.
pub fn client() -> reqwest::Client {
    reqwest::Client::new()
}

/// Performs the call.
pub async fn fetch(
    _client: &reqwest::Client,
    _backing: &HttpBacking,
    _params: &Map<String, Value>,
    _env: &(dyn Fn(&str) -> Option<String> + Sync),
) -> Result<Value, String> {
    Err("http backing not implemented".into())
}
