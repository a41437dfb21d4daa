//! Uploads in `uploads` (migration 4): one row per id, the bytes as `bytea`. A put of an id
//! that is there only renames it (the id names its content), so nodes uploading the same
//! image at once both succeed and store it once. Knows nothing of image types.

use super::{Postgres, pg, to_u64};
use crate::store::StoreError;
use crate::store::uploads::StoredUpload;

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
    pub(in crate::store) async fn put_upload(
        &self,
        id: &str,
        name: &str,
        mime_type: &str,
        content: &[u8],
        created_at: i64,
    ) -> Result<(), StoreError> {
        let size = i64::try_from(content.len()).unwrap_or(i64::MAX);
        let c = self.client().await?;
        c.execute(
            "INSERT INTO uploads (id, name, mime_type, size_bytes, content, created_at)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (id) DO UPDATE SET name = excluded.name, mime_type = excluded.mime_type",
            &[&id, &name, &mime_type, &size, &content, &created_at],
        )
        .await
        .map_err(pg(format!("store upload `{id}`")))?;
        self.committed();
        Ok(())
    }

    pub(in crate::store) async fn upload_info(
        &self,
        id: &str,
    ) -> Result<Option<StoredUpload>, StoreError> {
        let c = self.client().await?;
        let row = c
            .query_opt(&format!("SELECT {COLUMNS} FROM uploads WHERE id = $1"), &[&id])
            .await
            .map_err(pg(format!("read upload `{id}`")))?;
        Ok(row.as_ref().map(stored))
    }

    pub(in crate::store) async fn upload(
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

    pub(in crate::store) async fn upload_index(&self) -> Result<Vec<StoredUpload>, StoreError> {
        let c = self.client().await?;
        let rows = c
            .query(&format!("SELECT {COLUMNS} FROM uploads ORDER BY id"), &[])
            .await
            .map_err(pg("list uploads"))?;
        Ok(rows.iter().map(stored).collect())
    }
}
