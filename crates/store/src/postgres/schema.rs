//! The PostgreSQL schema as numbered migrations, applied at start under a transaction-level
//! advisory lock (so nodes starting together apply each migration once). A database whose
//! schema is newer than this build knows is refused rather than written with old rules.

use tokio_postgres::Client;

use super::pg;
use crate::StoreError;

/// One step of the schema: applied once, in order, recorded in `boardsmith_schema`.
struct Migration {
    version: i32,
    name: &'static str,
    sql: &'static str,
}

/// Every migration this build knows, oldest first. Never edit one that has shipped: add the
/// next.
const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "dashboards, their versions, records",
        // State and record values are JSON kept as text: `jsonb` would reorder object keys.
        sql: "
        CREATE TABLE dashboards (
            id          text    PRIMARY KEY,
            version     bigint  NOT NULL,
            title       text    NOT NULL,
            panels      integer NOT NULL,
            created_at  bigint  NOT NULL,
            updated_at  bigint  NOT NULL,
            deleted     boolean NOT NULL DEFAULT false
        );
        CREATE INDEX dashboards_by_update ON dashboards (updated_at DESC, id);
        CREATE TABLE dashboard_versions (
            dashboard_id text    NOT NULL,
            version      bigint  NOT NULL,
            created_at   bigint  NOT NULL,
            title        text    NOT NULL,
            panels       integer NOT NULL,
            note         text    NOT NULL,
            state        text    NOT NULL,
            PRIMARY KEY (dashboard_id, version)
        );
        CREATE TABLE records (
            kind  text NOT NULL,
            id    text NOT NULL,
            value text NOT NULL,
            PRIMARY KEY (kind, id)
        );
    ",
    },
    Migration {
        version: 2,
        name: "refresh leases, shared panel results",
        sql: "
        CREATE TABLE refresh_leases (
            dashboard_id text        PRIMARY KEY,
            node         text        NOT NULL,
            expires_at   timestamptz NOT NULL
        );
        CREATE TABLE panel_results (
            dashboard_id text   NOT NULL,
            panel_id     text   NOT NULL,
            version      bigint NOT NULL,
            run          text   NOT NULL,
            PRIMARY KEY (dashboard_id, panel_id)
        );
    ",
    },
    Migration {
        version: 3,
        name: "node heartbeats, runs and their events, forwarded run requests, chat memory",
        sql: "
        CREATE TABLE nodes (
            node         text        PRIMARY KEY,
            heartbeat_at timestamptz NOT NULL,
            started_at   timestamptz NOT NULL DEFAULT now()
        );
        CREATE TABLE runs (
            run_id   text        PRIMARY KEY,
            node     text        NOT NULL,
            chat_id  text        NOT NULL,
            status   text        NOT NULL,
            last_seq bigint      NOT NULL,
            ended_at timestamptz
        );
        CREATE INDEX runs_running_by_chat ON runs (chat_id) WHERE status = 'running';
        CREATE TABLE run_events (
            run_id text   NOT NULL,
            seq    bigint NOT NULL,
            event  text   NOT NULL,
            PRIMARY KEY (run_id, seq)
        );
        CREATE TABLE run_requests (
            id         bigserial   PRIMARY KEY,
            node       text        NOT NULL,
            run_id     text        NOT NULL,
            kind       text        NOT NULL,
            body       text        NOT NULL,
            answer     text,
            created_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE TABLE chat_runs (
            id         bigserial PRIMARY KEY,
            chat_id    text      NOT NULL,
            updated_at bigint    NOT NULL,
            line       text      NOT NULL
        );
        CREATE INDEX chat_runs_by_chat ON chat_runs (chat_id, id);
    ",
    },
    Migration {
        version: 4,
        name: "uploaded images",
        // `bytea`: images are at most BOARDSMITH_UPLOAD_MAX_BYTES (10 MiB by default), well
        // within what a value may hold; no large objects to clean up.
        sql: "
        CREATE TABLE uploads (
            id         text   PRIMARY KEY,
            name       text   NOT NULL,
            mime_type  text   NOT NULL,
            size_bytes bigint NOT NULL,
            content    bytea  NOT NULL,
            created_at bigint NOT NULL
        );
    ",
    },
    Migration {
        version: 5,
        name: "knowledge bases and their documents",
        sql: "
        CREATE TABLE kb_bases (
            id   text PRIMARY KEY,
            meta text NOT NULL
        );
        CREATE TABLE kb_documents (
            id     text PRIMARY KEY,
            kb     text NOT NULL,
            meta   text NOT NULL,
            chunks text NOT NULL
        );
        CREATE INDEX kb_documents_by_kb ON kb_documents (kb);
    ",
    },
    Migration {
        version: 6,
        name: "who holds each upload",
        // Uploads from before have no holder: only the owner or an admin deletes them.
        sql: "
        CREATE TABLE upload_holders (
            upload_id text NOT NULL REFERENCES uploads (id) ON DELETE CASCADE,
            holder    text NOT NULL,
            PRIMARY KEY (upload_id, holder)
        );
        CREATE INDEX upload_holders_by_holder ON upload_holders (holder);
    ",
    },
    Migration {
        version: 7,
        name: "panels' last good results",
        // `bytes` is the run's length in bytes (an `integer`: a text value is at most 1 GB, and
        // its sum is a `bigint`, quicker than `numeric`), kept so the budget is summed from the
        // age index alone (an index-only scan), never the texts.
        sql: "
        CREATE TABLE IF NOT EXISTS last_good (
            dashboard_id text   NOT NULL,
            panel_id     text   NOT NULL,
            fingerprint  text   NOT NULL,
            at           bigint NOT NULL,
            bytes        integer NOT NULL,
            run          text   NOT NULL,
            PRIMARY KEY (dashboard_id, panel_id, fingerprint)
        );
        CREATE INDEX IF NOT EXISTS last_good_by_age
            ON last_good (at, dashboard_id, panel_id, fingerprint) INCLUDE (bytes);
    ",
    },
    Migration {
        version: 8,
        name: "versions' authors",
        // JSON text (`base::principal::Author`); NULL on versions saved before authors.
        sql: "ALTER TABLE dashboard_versions ADD COLUMN IF NOT EXISTS author text;",
    },
];

/// Any fixed key: the advisory lock migrations run under.
const MIGRATION_LOCK: i64 = 0x626f_6172_6473_6d31; // "boardsm1"

/// The newest schema version this build knows.
pub(super) fn latest() -> i32 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

/// Brings the database's schema to [`latest`]; refuses a newer one. Returns the version found
/// before migrating.
pub(super) async fn migrate(client: &mut Client) -> Result<i32, StoreError> {
    let tx = client.transaction().await.map_err(pg("begin the migration"))?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(pg("take the migration lock"))?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS boardsmith_schema (
            version    integer     PRIMARY KEY,
            name       text        NOT NULL,
            applied_at timestamptz NOT NULL DEFAULT now()
        )",
    )
    .await
    .map_err(pg("create boardsmith_schema"))?;
    let found: i32 = tx
        .query_one("SELECT coalesce(max(version), 0) FROM boardsmith_schema", &[])
        .await
        .map_err(pg("read the schema version"))?
        .get(0);
    if found > latest() {
        return Err(StoreError::Storage(format!(
            "the database's schema is version {found}, newer than this build of boardsmith \
             knows ({}): run a newer boardsmith against it",
            latest()
        )));
    }
    for m in MIGRATIONS.iter().filter(|m| m.version > found) {
        tx.batch_execute(m.sql)
            .await
            .map_err(pg(format!("migration {} ({})", m.version, m.name)))?;
        tx.execute(
            "INSERT INTO boardsmith_schema (version, name) VALUES ($1, $2)",
            &[&m.version, &m.name],
        )
        .await
        .map_err(pg("record the migration"))?;
        tracing::info!(version = m.version, name = m.name, "applied a schema migration");
    }
    tx.commit().await.map_err(pg("commit the migration"))?;
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_numbered_in_order_from_one() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version, i as i32 + 1, "migration {} is out of order", m.name);
        }
        assert_eq!(latest(), MIGRATIONS.len() as i32);
    }
}
