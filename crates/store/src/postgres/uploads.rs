//! Uploads in `uploads` (migration 4): one row per id, the bytes as `bytea`. A put of an id
//! that is there only renames it (the id names its content), so nodes uploading the same
//! image at once both succeed and store it once. Who holds each is `upload_holders`
//! (migration 6); a checked put and a delete run under one transaction-level advisory lock,
//! so nodes uploading at once cannot both pass the quota. Knows nothing of image types.

use super::{Postgres, pg, to_u64};
use crate::StoreError;
use crate::uploads::{StoredUpload, UploadDelete, UploadPut, UploadQuota, decide, release};

/// Any fixed key: the advisory lock checked puts and deletes of uploads take.
const UPLOADS_LOCK: i64 = 0x626f_6172_6475_706c; // "boardupl"

/// A put: a new id is inserted; an id that is there only takes the new name and type.
const UPSERT: &str = "INSERT INTO uploads (id, name, mime_type, size_bytes, content, created_at)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (id) DO UPDATE SET name = excluded.name, mime_type = excluded.mime_type";

/// A transaction holding [`UPLOADS_LOCK`]: what checked puts and deletes run in.
async fn locked<'a>(
    c: &'a mut deadpool_postgres::Object,
    what: &str,
) -> Result<deadpool_postgres::Transaction<'a>, StoreError> {
    let tx = c.transaction().await.map_err(pg(what))?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&UPLOADS_LOCK]).await.map_err(pg(what))?;
    Ok(tx)
}

/// The columns [`stored`] reads, in its order.
const COLUMNS: &str = "id, name, mime_type, size_bytes, created_at";

fn stored(row: &tokio_postgres::Row) -> StoredUpload {
    StoredUpload {
        id: row.get(0),
        name: row.get(1),
        mime_type: row.get(2),
        size_bytes: to_u64(row.get(3)),
        created_at: row.get(4),
    }
}

impl Postgres {
    pub(crate) async fn put_upload(
        &self,
        id: &str,
        name: &str,
        mime_type: &str,
        content: &[u8],
        created_at: i64,
    ) -> Result<(), StoreError> {
        let size = i64::try_from(content.len()).unwrap_or(i64::MAX);
        let c = self.client().await?;
        c.execute(UPSERT, &[&id, &name, &mime_type, &size, &content, &created_at])
            .await
            .map_err(pg(format!("store upload `{id}`")))?;
        self.committed();
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn put_upload_held(
        &self,
        id: &str,
        name: &str,
        mime_type: &str,
        content: &[u8],
        created_at: i64,
        holder: &str,
        quota: UploadQuota,
    ) -> Result<UploadPut, StoreError> {
        let size = i64::try_from(content.len()).unwrap_or(i64::MAX);
        let what = || format!("store upload `{id}`");
        let mut c = self.client().await?;
        let tx = locked(&mut c, &what()).await?;
        let row = tx
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM uploads WHERE id = $1),
                        EXISTS (SELECT 1 FROM upload_holders WHERE upload_id = $1 AND holder = $2),
                        (SELECT coalesce(sum(size_bytes), 0)::bigint FROM uploads),
                        (SELECT coalesce(sum(u.size_bytes), 0)::bigint FROM uploads u
                           JOIN upload_holders h ON h.upload_id = u.id WHERE h.holder = $2)",
                &[&id, &holder],
            )
            .await
            .map_err(pg(what()))?;
        let verdict = decide(
            quota,
            to_u64(size),
            row.get(0),
            row.get(1),
            to_u64(row.get(2)),
            to_u64(row.get(3)),
        );
        if verdict != UploadPut::Stored {
            // Dropped: rolled back, nothing written.
            return Ok(verdict);
        }
        tx.execute(UPSERT, &[&id, &name, &mime_type, &size, &content, &created_at])
            .await
            .map_err(pg(what()))?;
        tx.execute(
            "INSERT INTO upload_holders (upload_id, holder) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            &[&id, &holder],
        )
        .await
        .map_err(pg(what()))?;
        tx.commit().await.map_err(pg(what()))?;
        self.committed();
        Ok(UploadPut::Stored)
    }

    pub(crate) async fn delete_upload(
        &self,
        id: &str,
        by: Option<&str>,
    ) -> Result<UploadDelete, StoreError> {
        let what = || format!("delete upload `{id}`");
        let mut c = self.client().await?;
        let tx = locked(&mut c, &what()).await?;
        let exists = tx
            .query_opt("SELECT 1 FROM uploads WHERE id = $1", &[&id])
            .await
            .map_err(pg(what()))?
            .is_some();
        if !exists {
            return Ok(UploadDelete::NotFound);
        }
        let holders: Vec<String> = tx
            .query("SELECT holder FROM upload_holders WHERE upload_id = $1", &[&id])
            .await
            .map_err(pg(what()))?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let verdict = release(&holders, by);
        match (verdict, by) {
            (UploadDelete::Released, Some(key)) => {
                tx.execute(
                    "DELETE FROM upload_holders WHERE upload_id = $1 AND holder = $2",
                    &[&id, &key],
                )
                .await
                .map_err(pg(what()))?;
            }
            (UploadDelete::Removed, _) => {
                // Its holders go with it (ON DELETE CASCADE).
                tx.execute("DELETE FROM uploads WHERE id = $1", &[&id])
                    .await
                    .map_err(pg(what()))?;
            }
            _ => return Ok(verdict),
        }
        tx.commit().await.map_err(pg(what()))?;
        self.committed();
        Ok(verdict)
    }

    pub(crate) async fn upload_info(&self, id: &str) -> Result<Option<StoredUpload>, StoreError> {
        let c = self.client().await?;
        let row = c
            .query_opt(&format!("SELECT {COLUMNS} FROM uploads WHERE id = $1"), &[&id])
            .await
            .map_err(pg(format!("read upload `{id}`")))?;
        Ok(row.as_ref().map(stored))
    }

    pub(crate) async fn upload(
        &self,
        id: &str,
    ) -> Result<Option<(StoredUpload, Vec<u8>)>, StoreError> {
        let c = self.client().await?;
        let row = c
            .query_opt(&format!("SELECT {COLUMNS}, content FROM uploads WHERE id = $1"), &[&id])
            .await
            .map_err(pg(format!("read upload `{id}`")))?;
        Ok(row.map(|r| (stored(&r), r.get(5))))
    }

    pub(crate) async fn upload_index(&self) -> Result<Vec<StoredUpload>, StoreError> {
        let c = self.client().await?;
        let rows = c
            .query(&format!("SELECT {COLUMNS} FROM uploads ORDER BY id"), &[])
            .await
            .map_err(pg("list uploads"))?;
        Ok(rows.iter().map(stored).collect())
    }
}
