//! Table definitions and the byte encoding of keys and values. Nothing outside this file knows
//! the layout; everything here is total (malformed bytes are an `Err`, never a panic).
//!
//! Tables:
//! - `dashboards`: id (`&str`) -> head ([`Head`]): current version, times, deleted flag, title,
//!   panel count.
//! - `versions`: [`version_key`] `(id, version)` -> [`encode_version`]: a checksum, then time,
//!   title, panel count, note, author and the state JSON. The key is `u16 BE id length | id bytes | u64 BE version`, so
//!   one dashboard's versions are a contiguous key range in version order, and no id's range
//!   can interleave with another's (the length prefix differs or the bytes do).
//! - `sessions`: session id (`&str`) -> JSON bytes.
//! - `api_keys`: key id (`&str`) -> JSON bytes (the record `api_keys` keeps: a digest, never
//!   the secret).
//! - `usage`: a row id (`["day","key","model","agent"]` as JSON text) -> JSON totals.
//! - `workflows`: workflow id (`&str`) -> JSON bytes (definitions made through the API).
//! - `workflow_runs`: run id (`&str`) -> JSON bytes (a workflow run's committed state).
//! - `last_good`: [`last_good_key`] `(dashboard, panel, fingerprint)` -> [`encode_last_good`]:
//!   a checksum, the time the result was produced and its JSON text. Each part of the key is
//!   `u16 BE len | bytes`, so one panel's entries (and one dashboard's) are a contiguous range.
//! - `last_good_by_at`: [`last_good_age_key`] `(at, last_good key)` -> the entry's `run` bytes:
//!   the eviction order (oldest first) and what the running total is counted from on open.
//! - `users`, `sign_ins`, `audit`, `sharing`, `share_links`: id (`&str`) -> JSON bytes (user
//!   accounts; sign-in sessions by the digest of their cookie, never the cookie; audit entries
//!   by time-ordered id; dashboards' owners and access by dashboard id; share links by the
//!   digest of their token).
//! - `meta`: `&str` -> `&[u8]` (format version).

use redb::TableDefinition;

/// Current head of each dashboard.
pub(super) const DASHBOARDS: TableDefinition<'static, &str, &[u8]> =
    TableDefinition::new("dashboards");
/// Every version of every dashboard.
pub(super) const VERSIONS: TableDefinition<'static, &[u8], &[u8]> =
    TableDefinition::new("versions");
/// Session JSON by session id.
pub(super) const SESSIONS: TableDefinition<'static, &str, &[u8]> = TableDefinition::new("sessions");
/// API key records by key id.
pub(super) const API_KEYS: TableDefinition<'static, &str, &[u8]> = TableDefinition::new("api_keys");
/// Usage rows by day, key, model and agent.
pub(super) const USAGE: TableDefinition<'static, &str, &[u8]> = TableDefinition::new("usage");
/// Definitions made through the admin API (providers, models, agents, settings) by
/// `kind:name`.
pub(super) const ADMIN: TableDefinition<'static, &str, &[u8]> = TableDefinition::new("admin");
/// Workflow definitions made through the API, by workflow id.
pub(super) const WORKFLOWS: TableDefinition<'static, &str, &[u8]> =
    TableDefinition::new("workflows");
/// Workflow runs' committed state, by run id.
pub(super) const WORKFLOW_RUNS: TableDefinition<'static, &str, &[u8]> =
    TableDefinition::new("workflow_runs");
/// Panels' last good results by dashboard, panel and fingerprint.
pub(super) const LAST_GOOD: TableDefinition<'static, &[u8], &[u8]> =
    TableDefinition::new("last_good");
/// The same entries by age (the oldest first), with their sizes.
pub(super) const LAST_GOOD_BY_AT: TableDefinition<'static, &[u8], u64> =
    TableDefinition::new("last_good_by_at");
/// User accounts by user id.
pub(super) const USERS: TableDefinition<'static, &str, &[u8]> = TableDefinition::new("users");
/// Sign-in sessions by the digest of their cookie.
pub(super) const SIGN_INS: TableDefinition<'static, &str, &[u8]> = TableDefinition::new("sign_ins");
/// Audit entries by id (time-ordered).
pub(super) const AUDIT: TableDefinition<'static, &str, &[u8]> = TableDefinition::new("audit");
/// Dashboards' owners and access by dashboard id.
pub(super) const SHARING: TableDefinition<'static, &str, &[u8]> = TableDefinition::new("sharing");
/// Share links by the digest of their token.
pub(super) const SHARE_LINKS: TableDefinition<'static, &str, &[u8]> =
    TableDefinition::new("share_links");
/// Chats' titles and settings by chat id.
pub(super) const CHAT_META: TableDefinition<'static, &str, &[u8]> =
    TableDefinition::new("chat_meta");
/// Drafts by `{dashboardId}/{userId}`.
pub(super) const DRAFTS: TableDefinition<'static, &str, &[u8]> = TableDefinition::new("drafts");
/// Dashboards in review mode by dashboard id.
pub(super) const REVIEWS: TableDefinition<'static, &str, &[u8]> = TableDefinition::new("reviews");
/// Alert rules' states by `{dashboardId}/{ruleId}/{fan-out value}`.
pub(super) const ALERT_STATES: TableDefinition<'static, &str, &[u8]> =
    TableDefinition::new("alert_states");
/// Alert notifications by their dedupe key.
pub(super) const NOTIFICATIONS: TableDefinition<'static, &str, &[u8]> =
    TableDefinition::new("notifications");
/// Alert channels by name.
pub(super) const CHANNELS: TableDefinition<'static, &str, &[u8]> = TableDefinition::new("channels");
/// Scheduled reports by id.
pub(super) const REPORTS: TableDefinition<'static, &str, &[u8]> = TableDefinition::new("reports");
/// Alert silences by id.
pub(super) const SILENCES: TableDefinition<'static, &str, &[u8]> = TableDefinition::new("silences");
/// Report runs by `{reportId}/{scheduled unix ms}`.
pub(super) const REPORT_RUNS: TableDefinition<'static, &str, &[u8]> =
    TableDefinition::new("report_runs");
/// Store-level metadata.
pub(super) const META: TableDefinition<'static, &str, &[u8]> = TableDefinition::new("meta");

/// The table of a kind of record.
pub(super) fn table_of(
    kind: super::Record,
) -> TableDefinition<'static, &'static str, &'static [u8]> {
    match kind {
        super::Record::Session => SESSIONS,
        super::Record::ApiKey => API_KEYS,
        super::Record::Usage => USAGE,
        super::Record::Admin => ADMIN,
        super::Record::Workflow => WORKFLOWS,
        super::Record::WorkflowRun => WORKFLOW_RUNS,
        super::Record::User => USERS,
        super::Record::SignIn => SIGN_INS,
        super::Record::Audit => AUDIT,
        super::Record::Sharing => SHARING,
        super::Record::ShareLink => SHARE_LINKS,
        super::Record::ChatMeta => CHAT_META,
        super::Record::Draft => DRAFTS,
        super::Record::Review => REVIEWS,
        super::Record::AlertState => ALERT_STATES,
        super::Record::Notification => NOTIFICATIONS,
        super::Record::Channel => CHANNELS,
        super::Record::Report => REPORTS,
        super::Record::ReportRun => REPORT_RUNS,
        super::Record::Silence => SILENCES,
    }
}

/// Value format tag of heads (and of versions written before checksums).
const FORMAT: u8 = 1;
/// Value format tag of versions with a checksum (and of last-good results).
const FORMAT_CHECKED: u8 = 2;
/// Value format tag of versions with a checksum and an author.
const FORMAT_AUTHORED: u8 = 3;

/// The longest dashboard id accepted (bytes).
pub(super) const MAX_ID_LEN: usize = 256;

/// `u16 BE len | id | u64 BE version`. Callers check `id.len() <= MAX_ID_LEN` first.
pub(super) fn version_key(id: &str, version: u64) -> Vec<u8> {
    let len = u16::try_from(id.len()).unwrap_or(u16::MAX);
    let mut k = Vec::with_capacity(2 + id.len() + 8);
    k.extend_from_slice(&len.to_be_bytes());
    k.extend_from_slice(id.as_bytes());
    k.extend_from_slice(&version.to_be_bytes());
    k
}

/// The version number in a [`version_key`].
pub(super) fn version_of_key(key: &[u8]) -> Result<u64, String> {
    let tail = key
        .len()
        .checked_sub(8)
        .and_then(|at| key.get(at..))
        .ok_or_else(|| format!("version key of {} bytes is too short", key.len()))?;
    let arr: [u8; 8] = tail.try_into().map_err(|_| "version key tail".to_owned())?;
    Ok(u64::from_be_bytes(arr))
}

/// `u16 BE len | part` for each part. Callers check each part is at most [`MAX_ID_LEN`] bytes.
fn length_prefixed(parts: &[&str]) -> Vec<u8> {
    let mut k = Vec::with_capacity(parts.iter().map(|p| 2 + p.len()).sum());
    for part in parts {
        let len = u16::try_from(part.len()).unwrap_or(u16::MAX);
        k.extend_from_slice(&len.to_be_bytes());
        k.extend_from_slice(part.as_bytes());
    }
    k
}

/// The key of a last good entry: `dashboard | panel | fingerprint`, each length-prefixed.
pub(super) fn last_good_key(dashboard: &str, panel: &str, fingerprint: &str) -> Vec<u8> {
    length_prefixed(&[dashboard, panel, fingerprint])
}

/// What every [`last_good_key`] of a panel starts with (and of no other panel).
pub(super) fn last_good_panel_prefix(dashboard: &str, panel: &str) -> Vec<u8> {
    length_prefixed(&[dashboard, panel])
}

/// What every [`last_good_key`] of a dashboard starts with (and of no other dashboard).
pub(super) fn last_good_dashboard_prefix(dashboard: &str) -> Vec<u8> {
    length_prefixed(&[dashboard])
}

/// `at` as 8 bytes that sort as the signed number does (sign bit flipped, BE).
fn sortable_i64(at: i64) -> [u8; 8] {
    (u64::from_ne_bytes(at.to_ne_bytes()) ^ (1 << 63)).to_be_bytes()
}

/// The key of an entry in the age index: `sortable at | last_good key`, so the oldest entry
/// comes first (ties by key).
pub(super) fn last_good_age_key(at: i64, key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(8 + key.len());
    k.extend_from_slice(&sortable_i64(at));
    k.extend_from_slice(key);
    k
}

/// The [`last_good_key`] inside a [`last_good_age_key`].
pub(super) fn last_good_key_of_age_key(age_key: &[u8]) -> Result<&[u8], String> {
    age_key.get(8..).ok_or_else(|| format!("age key of {} bytes is too short", age_key.len()))
}

/// `FORMAT_CHECKED | xxh3-64 of the rest u64 | at i64 | run (rest)`: like a version, damage on
/// disk is an error on read, not stale data served as good.
pub(super) fn encode_last_good(at: i64, run: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(1 + 8 + 8 + run.len());
    v.push(FORMAT_CHECKED);
    v.extend_from_slice(&[0; 8]);
    v.extend_from_slice(&at.to_be_bytes());
    v.extend_from_slice(run);
    let sum = xxhash_rust::xxh3::xxh3_64(&v[9..]);
    v[1..9].copy_from_slice(&sum.to_be_bytes());
    v
}

/// The time in an [`encode_last_good`] value, read without the checksum (the writer orders and
/// indexes entries by it; reads check it); `None` for a value too short or of another format.
pub(super) fn last_good_at(bytes: &[u8]) -> Option<i64> {
    match bytes.split_first() {
        Some((&FORMAT_CHECKED, rest)) => {
            Some(i64::from_be_bytes(rest.get(8..16)?.try_into().ok()?))
        }
        _ => None,
    }
}

/// Reads the checksum that follows a checked format byte and compares it with the rest.
fn verify_checksum(r: &mut Reader<'_>) -> Result<(), String> {
    let stored = r.u64()?;
    let actual = xxhash_rust::xxh3::xxh3_64(r.0);
    if stored != actual {
        return Err(format!(
            "checksum mismatch (stored {stored:016x}, computed {actual:016x}): the value \
             changed on disk after it was written"
        ));
    }
    Ok(())
}

/// Inverse of [`encode_last_good`]: the time and the run's bytes, after checking the checksum.
pub(super) fn decode_last_good(bytes: &[u8]) -> Result<(i64, &[u8]), String> {
    let mut r = Reader(bytes);
    match r.take(1)? {
        [FORMAT_CHECKED] => verify_checksum(&mut r)?,
        other => return Err(format!("unknown value format {other:?}")),
    }
    let at = r.i64()?;
    Ok((at, r.0))
}

/// The current head of a dashboard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Head {
    pub version: u64,
    pub created_at: i64,
    pub updated_at: i64,
    pub deleted: bool,
    pub panels: u32,
    pub title: String,
}

/// `FORMAT | version u64 | created_at i64 | updated_at i64 | deleted u8 | panels u32 | title`.
pub(super) fn encode_head(h: &Head) -> Vec<u8> {
    let mut v = Vec::with_capacity(1 + 8 * 3 + 1 + 4 + 4 + h.title.len());
    v.push(FORMAT);
    v.extend_from_slice(&h.version.to_be_bytes());
    v.extend_from_slice(&h.created_at.to_be_bytes());
    v.extend_from_slice(&h.updated_at.to_be_bytes());
    v.push(u8::from(h.deleted));
    v.extend_from_slice(&h.panels.to_be_bytes());
    put_str(&mut v, &h.title);
    v
}

/// Inverse of [`encode_head`].
pub(super) fn decode_head(bytes: &[u8]) -> Result<Head, String> {
    let mut r = Reader(bytes);
    r.format()?;
    let version = r.u64()?;
    let created_at = r.i64()?;
    let updated_at = r.i64()?;
    let deleted = match r.take(1)? {
        [0] => false,
        [1] => true,
        other => return Err(format!("bad deleted flag {other:?}")),
    };
    let panels = r.u32()?;
    let title = r.str()?.to_owned();
    if !r.0.is_empty() {
        return Err(format!("{} trailing bytes in head", r.0.len()));
    }
    Ok(Head { version, created_at, updated_at, deleted, panels, title })
}

/// The fixed part of a version value (the state JSON follows it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct VersionHeader<'a> {
    pub created_at: i64,
    pub panels: u32,
    pub title: &'a str,
    pub note: &'a str,
    /// The author as JSON (`base::principal::Author`); empty for versions from before authors.
    pub author: &'a str,
}

/// `FORMAT_AUTHORED | xxh3-64 of the rest u64 | created_at i64 | panels u32 | title | note |
/// author | state JSON (rest)`; strings are `u32 BE len | UTF-8`. The checksum makes damage on
/// disk an error on read instead of data served as good (a changed digit still parses as
/// JSON).
pub(super) fn encode_version(h: &VersionHeader<'_>, state_json: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(
        1 + 8 + 8 + 4 + 12 + h.title.len() + h.note.len() + h.author.len() + state_json.len(),
    );
    v.push(FORMAT_AUTHORED);
    v.extend_from_slice(&[0; 8]);
    v.extend_from_slice(&h.created_at.to_be_bytes());
    v.extend_from_slice(&h.panels.to_be_bytes());
    put_str(&mut v, h.title);
    put_str(&mut v, h.note);
    put_str(&mut v, h.author);
    v.extend_from_slice(state_json);
    let sum = xxhash_rust::xxh3::xxh3_64(&v[9..]);
    v[1..9].copy_from_slice(&sum.to_be_bytes());
    v
}

/// Inverse of [`encode_version`]: the header and the state JSON bytes, after checking the
/// checksum (versions written before checksums are read unchecked, and those from before
/// authors have none).
pub(super) fn decode_version(bytes: &[u8]) -> Result<(VersionHeader<'_>, &[u8]), String> {
    let mut r = Reader(bytes);
    let authored = match r.take(1)? {
        [FORMAT] => false,
        [FORMAT_CHECKED] => {
            verify_checksum(&mut r)?;
            false
        }
        [FORMAT_AUTHORED] => {
            verify_checksum(&mut r)?;
            true
        }
        other => return Err(format!("unknown value format {other:?}")),
    };
    let created_at = r.i64()?;
    let panels = r.u32()?;
    let title = r.str()?;
    let note = r.str()?;
    let author = if authored { r.str()? } else { "" };
    Ok((VersionHeader { created_at, panels, title, note, author }, r.0))
}

fn put_str(v: &mut Vec<u8>, s: &str) {
    // Titles and notes come from our own callers; clamp rather than fail on absurd lengths.
    let bytes = s.as_bytes();
    let n = bytes.len().min(u32::MAX as usize);
    let len = u32::try_from(n).unwrap_or(u32::MAX);
    v.extend_from_slice(&len.to_be_bytes());
    v.extend_from_slice(bytes.get(..n).unwrap_or_default());
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.0.len() < n {
            return Err(format!("truncated value: wanted {n} more bytes, have {}", self.0.len()));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        self.take(N)?.try_into().map_err(|_| "truncated value".to_owned())
    }
    fn format(&mut self) -> Result<(), String> {
        match self.take(1)? {
            [FORMAT] => Ok(()),
            other => Err(format!("unknown value format {other:?}")),
        }
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_be_bytes(self.array()?))
    }
    fn i64(&mut self) -> Result<i64, String> {
        Ok(i64::from_be_bytes(self.array()?))
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_be_bytes(self.array()?))
    }
    fn str(&mut self) -> Result<&'a str, String> {
        let n = self.u32()? as usize;
        std::str::from_utf8(self.take(n)?).map_err(|e| format!("bad UTF-8: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_keys_sort_by_version_within_an_id() {
        let mut ks: Vec<Vec<u8>> =
            [300u64, 2, 1, 256, u64::MAX].iter().map(|&v| version_key("db_a", v)).collect();
        ks.sort();
        let vs: Vec<u64> = ks.iter().map(|k| version_of_key(k).unwrap()).collect();
        assert_eq!(vs, vec![1, 2, 256, 300, u64::MAX]);
        // Different ids never interleave: "a" < "ab" by the length prefix.
        assert!(version_key("a", u64::MAX) < version_key("ab", 0));
    }

    #[test]
    fn last_good_keys_group_by_panel_and_age_keys_sort_by_time() {
        let k = last_good_key("db_a", "p1", "ab12");
        assert!(k.starts_with(&last_good_panel_prefix("db_a", "p1")));
        assert!(k.starts_with(&last_good_dashboard_prefix("db_a")));
        // A panel (or dashboard) whose id extends another's is not inside its range.
        assert!(
            !last_good_key("db_a", "p10", "ab").starts_with(&last_good_panel_prefix("db_a", "p1"))
        );
        assert!(
            !last_good_key("db_ab", "p1", "ab").starts_with(&last_good_dashboard_prefix("db_a"))
        );
        let mut ages: Vec<Vec<u8>> =
            [5i64, -3, i64::MAX, 0, i64::MIN].iter().map(|&at| last_good_age_key(at, &k)).collect();
        ages.sort();
        let firsts: Vec<[u8; 8]> = ages.iter().map(|a| a[..8].try_into().unwrap()).collect();
        let want: Vec<[u8; 8]> =
            [i64::MIN, -3, 0, 5, i64::MAX].iter().map(|&at| sortable_i64(at)).collect();
        assert_eq!(firsts, want);
        assert_eq!(last_good_key_of_age_key(&ages[0]).unwrap(), k.as_slice());
        assert!(last_good_key_of_age_key(&[1, 2]).is_err());

        let enc = encode_last_good(-7, b"{\"rows\":[]}");
        assert_eq!(decode_last_good(&enc).unwrap(), (-7, b"{\"rows\":[]}".as_slice()));
        assert_eq!(last_good_at(&enc), Some(-7));
        assert_eq!(last_good_at(&enc[..16]), None);
        let mut bad = enc.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert!(decode_last_good(&bad).unwrap_err().starts_with("checksum mismatch"));
        assert!(decode_last_good(&enc[..12]).is_err());
        assert!(decode_last_good(&[]).is_err());
    }

    #[test]
    fn head_and_version_round_trip_and_reject_garbage() {
        let h = Head {
            version: 7,
            created_at: -1,
            updated_at: 1_700_000_000_000,
            deleted: true,
            panels: 3,
            title: "Crypto ☃".into(),
        };
        assert_eq!(decode_head(&encode_head(&h)).unwrap(), h);
        let vh = VersionHeader {
            created_at: 5,
            panels: 2,
            title: "t",
            note: "revert to 3",
            author: r#"{"via":"rest"}"#,
        };
        let enc = encode_version(&vh, b"{\"a\":1}");
        let (d, s) = decode_version(&enc).unwrap();
        assert_eq!(d, vh);
        assert_eq!(s, b"{\"a\":1}");
        for cut in 0..enc.len().min(30) {
            let _ = decode_version(&enc[..cut]);
        }
        // Any changed byte is caught, even one that keeps the JSON valid.
        for at in [1, 9, 20, enc.len() - 2] {
            let mut bad = enc.clone();
            bad[at] ^= 0x01;
            let err = decode_version(&bad).unwrap_err();
            assert!(err.starts_with("checksum mismatch"), "byte {at}: {err}");
        }
        // Versions written before authors, and before checksums, still read.
        let plain = VersionHeader { author: "", ..vh };
        let old = encode_version(&plain, b"{\"a\":1}");
        let cut = old.len() - 7 - 4;
        let mut checked = [&[FORMAT_CHECKED], &old[1..cut], &old[cut + 4..]].concat();
        let sum = xxhash_rust::xxh3::xxh3_64(&checked[9..]);
        checked[1..9].copy_from_slice(&sum.to_be_bytes());
        assert_eq!(decode_version(&checked).unwrap(), (plain, b"{\"a\":1}".as_slice()));
        let mut legacy = vec![FORMAT];
        legacy.extend_from_slice(&checked[9..]);
        assert_eq!(decode_version(&legacy).unwrap(), (plain, b"{\"a\":1}".as_slice()));
        assert!(decode_head(&[]).is_err());
        assert!(decode_head(&[9, 9, 9]).is_err());
        assert!(decode_version(&[1, 0]).is_err());
        assert!(decode_version(&[2, 0, 0]).is_err());
    }
}
