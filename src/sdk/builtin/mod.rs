//! Deterministic synthetic data for `builtin` sources: the same source, method, params and day
//! always give the same data, so everything works offline and tests are reproducible.

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

/// What a generator may depend on besides its params.
#[derive(Debug, Clone)]
pub struct GenContext {
    /// Seed derived from (source, method, canonical params, UTC day).
    pub seed: u64,
    /// "Now": series end at or before this instant.
    pub now: DateTime<Utc>,
}

impl GenContext {
    /// Derives the seed from the call's identity and the UTC day of `now`.
    pub fn new(
        source: &str,
        method: &str,
        params: &Map<String, Value>,
        now: DateTime<Utc>,
    ) -> Self {
        let key =
            format!("{source}.{method}|{}|{}", now.date_naive(), Value::Object(params.clone()));
        Self { seed: xxhash_rust::xxh3::xxh3_64(key.as_bytes()), now }
    }
}

/// Runs generator `name` (PLACEHOLDER: replaced by the real generators).
pub fn generate(
    name: &str,
    _params: &Map<String, Value>,
    _ctx: &GenContext,
) -> Result<Value, String> {
    Err(format!("no builtin generator `{name}`"))
}
