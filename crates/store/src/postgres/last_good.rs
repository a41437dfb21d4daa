//! Panels' last good results in `last_good` (migration 7): one row per (dashboard, panel,
//! fingerprint) with the run's JSON text, its time and its length. A put is one transaction
//! under a transaction-level advisory lock, so puts from several nodes take their turns and
//! the bounds hold exactly: the conditional upsert (an older `at` than the row's changes
//! nothing; a dashboard that is not there gets nothing, and its row is key-share locked, so a
//! purge waits for the put and then removes what it wrote), then one statement dropping the
//! panel's entries past [`LAST_GOOD_PER_PANEL`] and, past the budget, the oldest entries of
//! all. Past the budget, which entries go is a running sum over the age index
//! (`last_good_by_age`, `bytes` included: an index-only scan, no run text read). No notice:
//! other nodes read a result when they need one.

use super::{Postgres, pg, to_i64};
use crate::{LAST_GOOD_PER_PANEL, StoreError};

/// Any fixed key: the advisory lock puts of last good results take.
const LAST_GOOD_LOCK: i64 = 0x626f_6172_646c_6764; // "boardlgd"

/// The put: a new key is inserted, a kept one replaced unless it is newer; nothing for a
/// dashboard that is not there (whose row stays key-share locked until the commit).
const UPSERT: &str = "
    WITH d AS (SELECT id FROM dashboards WHERE id = $1 FOR KEY SHARE)
    INSERT INTO last_good (dashboard_id, panel_id, fingerprint, at, bytes, run)
    SELECT id, $2, $3, $4, $5, $6 FROM d
    ON CONFLICT (dashboard_id, panel_id, fingerprint) DO UPDATE
        SET at = excluded.at, bytes = excluded.bytes, run = excluded.run
        WHERE last_good.at <= excluded.at";

/// The bounds, in one statement: the panel's entries after its newest `$3` (`extra`), then,
/// when all entries hold more than `$4` bytes, of the rest, newest first, every entry from the
/// one that takes the running total past `$4` (so the oldest go first, and only until the rest
/// fit). Under the budget (the usual case) the window is never run: the total is one
/// aggregate, a one-time filter (20,000 entries: 2.5 ms against 12 ms for the window).
const EVICT: &str = "
    WITH extra AS (
        SELECT dashboard_id, panel_id, fingerprint FROM last_good
        WHERE dashboard_id = $1 AND panel_id = $2
        ORDER BY at DESC, fingerprint DESC
        OFFSET $3
    ), rest AS (
        SELECT dashboard_id, panel_id, fingerprint,
               sum(bytes) OVER (
                   ORDER BY at DESC, dashboard_id DESC, panel_id DESC, fingerprint DESC
                   ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
               ) AS newer_bytes
        FROM last_good l
        WHERE (SELECT sum(bytes) FROM last_good) > $4
          AND NOT EXISTS (
            SELECT 1 FROM extra e
            WHERE (e.dashboard_id, e.panel_id, e.fingerprint)
                = (l.dashboard_id, l.panel_id, l.fingerprint)
        )
    ), dropped AS (
        SELECT dashboard_id, panel_id, fingerprint FROM extra
        UNION ALL
        SELECT dashboard_id, panel_id, fingerprint FROM rest WHERE newer_bytes > $4
    )
    DELETE FROM last_good l USING dropped x
    WHERE (l.dashboard_id, l.panel_id, l.fingerprint) = (x.dashboard_id, x.panel_id, x.fingerprint)";

impl Postgres {
    pub(crate) async fn put_last_good(
        &self,
        dashboard: &str,
        panel: &str,
        fingerprint: &str,
        run: &str,
        at: i64,
    ) -> Result<(), StoreError> {
        // (A text value is at most 1 GB in PostgreSQL: a larger bound is the same as 1 GB.)
        let Ok(bytes) = i32::try_from(run.len()) else { return Ok(()) };
        if run.len() as u64 > self.last_good_entry_bytes {
            return Ok(());
        }
        let what = format!("keep the last good result of `{dashboard}` panel `{panel}`");
        let mut c = self.client().await?;
        let tx = c.transaction().await.map_err(pg(&what))?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LAST_GOOD_LOCK])
            .await
            .map_err(pg(&what))?;
        let written = tx
            .execute(UPSERT, &[&dashboard, &panel, &fingerprint, &at, &bytes, &run])
            .await
            .map_err(pg(&what))?;
        if written > 0 {
            let per_panel = to_i64(LAST_GOOD_PER_PANEL as u64);
            let budget = to_i64(self.last_good_bytes);
            tx.execute(EVICT, &[&dashboard, &panel, &per_panel, &budget])
                .await
                .map_err(pg(format!("drop old last good results after: {what}")))?;
        }
        tx.commit().await.map_err(pg(&what))?;
        self.committed();
        Ok(())
    }

    pub(crate) async fn last_good(
        &self,
        dashboard: &str,
        panel: &str,
        fingerprint: &str,
    ) -> Result<Option<(String, i64)>, StoreError> {
        let c = self.client().await?;
        let row = c
            .query_opt(
                "SELECT run, at FROM last_good
                 WHERE dashboard_id = $1 AND panel_id = $2 AND fingerprint = $3",
                &[&dashboard, &panel, &fingerprint],
            )
            .await
            .map_err(pg(format!("read the last good result of `{dashboard}` panel `{panel}`")))?;
        Ok(row.map(|r| (r.get(0), r.get(1))))
    }
}
