//! Chat lines in `chat_runs` (migration 3): one row per line, read back by chat in id order.
//!
//! Every write to a chat first takes a transaction-level advisory lock of that chat, so its
//! rows are numbered and committed one at a time: a reader that saw up to id N can ask for
//! "the rows after N" and never miss one that commits later with a smaller id. The lock also
//! makes "append unless the chat grew past N" exact across nodes. Knows nothing of the lines'
//! format.

use super::{Postgres, lock_key, pg};
use crate::StoreError;
use crate::chats::{ChatLine, ChatSpan};

/// The advisory-lock key of a chat's writes. It shares the dashboards' key space: a
/// collision only makes an append wait for a dashboard's writer, or the other way round.
fn chat_key(chat_id: &str) -> i64 {
    lock_key(&format!("chat_runs:{chat_id}"))
}

/// A transaction on `c` holding `chat_id`'s write lock until it ends.
async fn locked<'a>(
    c: &'a mut deadpool_postgres::Object,
    chat_id: &str,
) -> Result<deadpool_postgres::Transaction<'a>, StoreError> {
    let tx = c.transaction().await.map_err(pg("begin a chat write"))?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&chat_key(chat_id)])
        .await
        .map_err(pg(format!("lock chat `{chat_id}`")))?;
    Ok(tx)
}

fn line(row: &tokio_postgres::Row) -> ChatLine {
    ChatLine { chat_id: row.get(0), id: row.get(1), updated_at: row.get(2), line: row.get(3) }
}

impl Postgres {
    pub(crate) async fn append_chat_line(
        &self,
        chat_id: &str,
        after: Option<i64>,
        updated_at: i64,
        text: &str,
    ) -> Result<Option<i64>, StoreError> {
        let mut c = self.client().await?;
        let tx = locked(&mut c, chat_id).await?;
        // After the lock: this statement sees every earlier append of the chat.
        let row = tx
            .query_opt(
                "INSERT INTO chat_runs (chat_id, updated_at, line)
                 SELECT $1::text, $2::bigint, $3::text
                 WHERE $4::bigint IS NULL
                    OR NOT EXISTS (SELECT 1 FROM chat_runs WHERE chat_id = $1 AND id > $4)
                 RETURNING id",
                &[&chat_id, &updated_at, &text, &after],
            )
            .await
            .map_err(pg(format!("append to chat `{chat_id}`")))?;
        tx.commit().await.map_err(pg("commit a chat append"))?;
        self.committed();
        Ok(row.map(|r| r.get(0)))
    }

    pub(crate) async fn chat_lines(
        &self,
        chat_id: &str,
        after: i64,
    ) -> Result<Vec<ChatLine>, StoreError> {
        let c = self.client().await?;
        let rows = c
            .query(
                "SELECT chat_id, id, updated_at, line FROM chat_runs
                 WHERE chat_id = $1 AND id > $2 ORDER BY id",
                &[&chat_id, &after],
            )
            .await
            .map_err(pg(format!("read chat `{chat_id}`")))?;
        Ok(rows.iter().map(line).collect())
    }

    pub(crate) async fn chat_lines_by_id(&self, ids: &[i64]) -> Result<Vec<ChatLine>, StoreError> {
        let c = self.client().await?;
        let rows = c
            .query(
                "SELECT chat_id, id, updated_at, line FROM chat_runs
                 WHERE id = ANY($1) ORDER BY id",
                &[&ids],
            )
            .await
            .map_err(pg("read chat lines"))?;
        Ok(rows.iter().map(line).collect())
    }

    pub(crate) async fn chat_index(&self) -> Result<Vec<ChatSpan>, StoreError> {
        let c = self.client().await?;
        // Answered from the (chat_id, id) index: no line is read.
        let rows = c
            .query(
                "SELECT chat_id, min(id), max(id), count(*) FROM chat_runs
                 GROUP BY chat_id ORDER BY chat_id",
                &[],
            )
            .await
            .map_err(pg("list chats"))?;
        Ok(rows
            .iter()
            .map(|r| ChatSpan {
                chat_id: r.get(0),
                first: r.get(1),
                last: r.get(2),
                lines: super::to_u64(r.get(3)),
            })
            .collect())
    }

    pub(crate) async fn delete_chat(&self, chat_id: &str) -> Result<u64, StoreError> {
        let mut c = self.client().await?;
        let tx = locked(&mut c, chat_id).await?;
        let n = tx
            .execute("DELETE FROM chat_runs WHERE chat_id = $1", &[&chat_id])
            .await
            .map_err(pg(format!("delete chat `{chat_id}`")))?;
        tx.commit().await.map_err(pg("commit a chat delete"))?;
        self.committed();
        Ok(n)
    }

    pub(crate) async fn import_chat(
        &self,
        chat_id: &str,
        lines: &[(i64, String)],
    ) -> Result<(), StoreError> {
        let mut c = self.client().await?;
        let tx = locked(&mut c, chat_id).await?;
        let held = tx
            .query_one("SELECT EXISTS (SELECT 1 FROM chat_runs WHERE chat_id = $1)", &[&chat_id])
            .await
            .map_err(pg(format!("look for chat `{chat_id}`")))?;
        if held.get::<_, bool>(0) {
            return Err(StoreError::Storage(format!("chat `{chat_id}` is already in the target")));
        }
        let insert = tx
            .prepare("INSERT INTO chat_runs (chat_id, updated_at, line) VALUES ($1, $2, $3)")
            .await
            .map_err(pg("prepare a chat import"))?;
        for (updated_at, text) in lines {
            tx.execute(&insert, &[&chat_id, updated_at, text])
                .await
                .map_err(pg(format!("import chat `{chat_id}`")))?;
        }
        tx.commit().await.map_err(pg("commit a chat import"))?;
        self.committed();
        Ok(())
    }
}
