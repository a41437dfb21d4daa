//! Table definitions and the byte encoding of keys and values. Nothing outside this file knows
//! the layout; everything here is total (malformed bytes are an `Err`, never a panic).
//!
//! Tables:
//! - `dashboards`: id (`&str`) -> head ([`Head`]): current version, times, deleted flag, title,
//!   panel count.
//! - `versions`: [`version_key`] `(id, version)` -> [`encode_version`]: a checksum, then time,
//!   title, panel count, note and the state JSON. The key is `u16 BE id length | id bytes | u64 BE version`, so
//!   one dashboard's versions are a contiguous key range in version order, and no id's range
//!   can interleave with another's (the length prefix differs or the bytes do).
//! - `sessions`: session id (`&str`) -> JSON bytes.
//! - `api_keys`: key id (`&str`) -> JSON bytes (the record `api_keys` keeps: a digest, never
//!   the secret).
//! - `usage`: a row id (`["day","key","model","agent"]` as JSON text) -> JSON totals.
//! - `workflows`: workflow id (`&str`) -> JSON bytes (definitions made through the API).
//! - `workflow_runs`: run id (`&str`) -> JSON bytes (a workflow run's committed state).
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
/// Store-level metadata.
pub(super) const META: TableDefinition<'static, &str, &[u8]> = TableDefinition::new("meta");

/// Value format tag of heads (and of versions written before checksums).
const FORMAT: u8 = 1;
/// Value format tag of versions with a checksum.
const FORMAT_CHECKED: u8 = 2;

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
}

/// `FORMAT_CHECKED | xxh3-64 of the rest u64 | created_at i64 | panels u32 | title | note |
/// state JSON (rest)`; strings are `u32 BE len | UTF-8`. The checksum makes damage on disk an
/// error on read instead of data served as good (a changed digit still parses as JSON).
pub(super) fn encode_version(h: &VersionHeader<'_>, state_json: &[u8]) -> Vec<u8> {
    let mut v =
        Vec::with_capacity(1 + 8 + 8 + 4 + 8 + h.title.len() + h.note.len() + state_json.len());
    v.push(FORMAT_CHECKED);
    v.extend_from_slice(&[0; 8]);
    v.extend_from_slice(&h.created_at.to_be_bytes());
    v.extend_from_slice(&h.panels.to_be_bytes());
    put_str(&mut v, h.title);
    put_str(&mut v, h.note);
    v.extend_from_slice(state_json);
    let sum = xxhash_rust::xxh3::xxh3_64(&v[9..]);
    v[1..9].copy_from_slice(&sum.to_be_bytes());
    v
}

/// Inverse of [`encode_version`]: the header and the state JSON bytes, after checking the
/// checksum (versions written before checksums are read unchecked).
pub(super) fn decode_version(bytes: &[u8]) -> Result<(VersionHeader<'_>, &[u8]), String> {
    let mut r = Reader(bytes);
    match r.take(1)? {
        [FORMAT] => {}
        [FORMAT_CHECKED] => {
            let stored = r.u64()?;
            let actual = xxhash_rust::xxh3::xxh3_64(r.0);
            if stored != actual {
                return Err(format!(
                    "checksum mismatch (stored {stored:016x}, computed {actual:016x}): the value \
                     changed on disk after it was written"
                ));
            }
        }
        other => return Err(format!("unknown value format {other:?}")),
    }
    let created_at = r.i64()?;
    let panels = r.u32()?;
    let title = r.str()?;
    let note = r.str()?;
    Ok((VersionHeader { created_at, panels, title, note }, r.0))
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
        let vh = VersionHeader { created_at: 5, panels: 2, title: "t", note: "revert to 3" };
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
        // Versions written before checksums still read.
        let mut legacy = vec![FORMAT];
        legacy.extend_from_slice(&enc[9..]);
        assert_eq!(decode_version(&legacy).unwrap(), (vh, b"{\"a\":1}".as_slice()));
        assert!(decode_head(&[]).is_err());
        assert!(decode_head(&[9, 9, 9]).is_err());
        assert!(decode_version(&[1, 0]).is_err());
        assert!(decode_version(&[2, 0, 0]).is_err());
    }
}
