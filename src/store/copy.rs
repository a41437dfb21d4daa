//! Copying a whole store into another (`boardsmith migrate-store --to postgres://...`): every
//! dashboard with its whole history (versions keep their numbers, times and notes) and every
//! record, then both sides read back and hashed the same way, so the copy is verified rather
//! than assumed.

use sha2::{Digest, Sha256};

use super::{DashboardState, Record, Store, StoreError, VersionInfo};

/// One dashboard with its whole history, as copied.
#[derive(Debug, Clone)]
pub struct History {
    /// The dashboard.
    pub id: String,
    /// Creation time, unix milliseconds.
    pub created_at: i64,
    /// Soft-deleted.
    pub deleted: bool,
    /// Every kept version, oldest first, with its state.
    pub versions: Vec<(VersionInfo, DashboardState)>,
}

/// What a copy moved, and the digests that prove it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyReport {
    /// Dashboards copied.
    pub dashboards: usize,
    /// Versions copied, all dashboards together.
    pub versions: usize,
    /// Records copied per kind.
    pub records: Vec<(Record, usize)>,
    /// SHA-256 of the source's content (hex).
    pub source_sha256: String,
    /// SHA-256 of the target's content read back after the copy (hex); equal to the source's.
    pub target_sha256: String,
}

/// Every dashboard's history, by id.
async fn histories(store: &Store) -> Result<Vec<History>, StoreError> {
    let mut list = store.list(true).await?;
    list.sort_by(|a, b| a.id.cmp(&b.id));
    let mut out = Vec::with_capacity(list.len());
    for item in list {
        let head = store.get(&item.id).await?;
        let mut versions = Vec::new();
        for info in store.versions(&item.id).await? {
            let state = store.get_version(&item.id, info.version).await?.state;
            versions.push((info, state));
        }
        out.push(History {
            id: item.id,
            created_at: head.created_at,
            deleted: head.deleted,
            versions,
        });
    }
    Ok(out)
}

/// The digest of a store's content: histories by id, then records by kind and id, each field
/// length-prefixed so no two contents share an encoding.
async fn digest(
    store: &Store,
) -> Result<(String, Vec<History>, Vec<(Record, Vec<(String, serde_json::Value)>)>), StoreError> {
    fn put(h: &mut Sha256, bytes: &[u8]) {
        h.update((bytes.len() as u64).to_be_bytes());
        h.update(bytes);
    }
    let histories = histories(store).await?;
    let mut records = Vec::new();
    for kind in Record::ALL {
        records.push((kind, store.records_with_ids(kind).await?));
    }
    let mut h = Sha256::new();
    for d in &histories {
        put(&mut h, d.id.as_bytes());
        put(&mut h, &d.created_at.to_be_bytes());
        put(&mut h, &[u8::from(d.deleted)]);
        for (info, state) in &d.versions {
            put(&mut h, &info.version.to_be_bytes());
            put(&mut h, &info.created_at.to_be_bytes());
            put(&mut h, info.title.as_bytes());
            put(&mut h, &(info.panels as u64).to_be_bytes());
            put(&mut h, info.note.as_bytes());
            let json = serde_json::to_vec(state).map_err(|e| StoreError::Storage(e.to_string()))?;
            put(&mut h, &json);
        }
    }
    for (kind, rows) in &records {
        for (id, value) in rows {
            put(&mut h, kind.key().as_bytes());
            put(&mut h, id.as_bytes());
            put(&mut h, value.to_string().as_bytes());
        }
    }
    let hex = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok((hex, histories, records))
}

/// Copies everything in `from` into `to`, which must hold no dashboards yet, and verifies the
/// copy by digest. A mismatch is an error naming both digests.
pub async fn copy(from: &Store, to: &Store) -> Result<CopyReport, StoreError> {
    if !to.is_empty().await? {
        return Err(StoreError::Storage(
            "the target already holds dashboards: copy into an empty database".into(),
        ));
    }
    let (source_sha256, histories, records) = digest(from).await?;
    for h in &histories {
        to.import(h).await?;
    }
    for (kind, rows) in &records {
        for (id, value) in rows {
            to.put_record(*kind, id, value).await?;
        }
    }
    let (target_sha256, _, _) = digest(to).await?;
    let report = CopyReport {
        dashboards: histories.len(),
        versions: histories.iter().map(|h| h.versions.len()).sum(),
        records: records.iter().map(|(k, rows)| (*k, rows.len())).collect(),
        source_sha256,
        target_sha256,
    };
    if report.source_sha256 != report.target_sha256 {
        return Err(StoreError::Storage(format!(
            "the copy does not match its source: sha256 {} read back, {} expected",
            report.target_sha256, report.source_sha256
        )));
    }
    Ok(report)
}
