//! Where a value came from: the provider that served it, whether it is demo data, the time the
//! data describes and when it was fetched. Every SDK answer carries one, and panel data carries
//! the list of its calls' origins to the analyst, so no number is shown without saying where it
//! came from (and no demo number passes for a real one).
//!
//! A leaf: knows nothing of the SDK, the sandbox or dashboards.

use serde::{Deserialize, Serialize};

/// The provider name of the built-in synthetic generators.
pub const DEMO_PROVIDER: &str = "demo";

/// Most entries kept for one panel run: a panel that calls fifty providers still says the
/// first ones and that it is demo whenever any of them was.
pub const MAX_ENTRIES: usize = 8;

/// The origin of one answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Provenance {
    /// The provider that served it (`binance`, `frankfurter`, `file`, `demo`).
    pub provider: String,
    /// Invented data: shown with a DEMO badge, never as real.
    pub demo: bool,
    /// The time the data describes (RFC 3339), when the provider says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub as_of: Option<String>,
    /// When it was fetched from the provider (unix ms): a cached answer keeps its fetch time.
    pub fetched_at: i64,
    /// The provider's endpoint (scheme, host and path: never the query, which may hold a key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

impl Provenance {
    /// Demo data generated for the day `as_of`, at `fetched_at`.
    pub fn demo(as_of: Option<String>, fetched_at: i64) -> Self {
        Self { provider: DEMO_PROVIDER.to_owned(), demo: true, as_of, fetched_at, url: None }
    }
}

/// Adds `p` to the origins of one run: one entry per provider, keeping the oldest fetch (the
/// data is as old as its oldest part); at most [`MAX_ENTRIES`], except that a demo origin is
/// never dropped while a real one is kept in its place.
pub fn merge(list: &mut Vec<Provenance>, p: Provenance) {
    if let Some(have) = list.iter_mut().find(|e| e.provider == p.provider && e.demo == p.demo) {
        if p.fetched_at < have.fetched_at {
            have.fetched_at = p.fetched_at;
        }
        if let (Some(a), Some(b)) = (&have.as_of, &p.as_of)
            && b < a
        {
            have.as_of = p.as_of;
        }
        return;
    }
    if list.len() < MAX_ENTRIES {
        list.push(p);
    } else if p.demo
        && !list.iter().any(|e| e.demo)
        && let Some(last) = list.last_mut()
    {
        *last = p;
    }
}

/// Whether any origin is demo data.
pub fn any_demo(list: &[Provenance]) -> bool {
    list.iter().any(|p| p.demo)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(provider: &str, fetched_at: i64) -> Provenance {
        Provenance {
            provider: provider.into(),
            demo: false,
            as_of: None,
            fetched_at,
            url: Some(format!("https://{provider}.example/x")),
        }
    }

    #[test]
    fn one_entry_per_provider_with_the_oldest_fetch() {
        let mut list = Vec::new();
        merge(&mut list, live("binance", 20));
        merge(&mut list, live("binance", 10));
        merge(&mut list, live("binance", 30));
        merge(&mut list, Provenance::demo(Some("2026-11-26".into()), 5));
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].fetched_at, 10);
        assert!(any_demo(&list));
        assert!(!any_demo(&list[..1]));
    }

    #[test]
    fn a_full_list_still_says_demo() {
        let mut list = Vec::new();
        for i in 0..20 {
            merge(&mut list, live(&format!("p{i}"), i));
        }
        assert_eq!(list.len(), MAX_ENTRIES);
        assert!(!any_demo(&list));
        merge(&mut list, Provenance::demo(None, 99));
        assert_eq!(list.len(), MAX_ENTRIES);
        assert!(any_demo(&list), "the demo origin replaced a real one");
    }
}
