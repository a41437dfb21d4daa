//! Runs shared between nodes: node heartbeats, the run registry (`runs`: which node owns a
//! run, its chat, whether it is going), each run's events (`run_events`, appended in batches by
//! the owner) and requests addressed to a run's owner (`run_requests`: a frontend-tool submit
//! or a steering message that reached another node). Every write that others wait for sends
//! its notice in the same statement.
//!
//! Stores events and request bodies as opaque text: it knows nothing of what they mean.

use std::time::Duration;

use serde_json::json;

use super::{CHANNEL, Postgres, pg, to_i64, to_u64};
use crate::{RunBatch, RunRow, RunStatus, StoreError};

impl Postgres {
    /// Says this node is alive (and when it first said so).
    pub(crate) async fn heartbeat(&self) -> Result<(), StoreError> {
        let c = self.client().await?;
        c.execute(
            "INSERT INTO nodes (node, heartbeat_at) VALUES ($1, now())
             ON CONFLICT (node) DO UPDATE SET heartbeat_at = now()",
            &[&&*self.node],
        )
        .await
        .map_err(pg("write the node heartbeat"))?;
        Ok(())
    }

    /// Forgets this node (a clean stop): its runs are lost at once rather than after the
    /// heartbeat times out.
    pub(crate) async fn leave(&self) -> Result<(), StoreError> {
        let c = self.client().await?;
        c.execute("DELETE FROM nodes WHERE node = $1", &[&&*self.node])
            .await
            .map_err(pg("remove the node's heartbeat"))?;
        Ok(())
    }

    /// Writes one batch of this node's run events and run states, and tells followers.
    pub(crate) async fn write_runs(&self, batch: &RunBatch) -> Result<(), StoreError> {
        let (mut ev_run, mut ev_seq, mut ev_text) = (Vec::new(), Vec::new(), Vec::new());
        for (run, seq, text) in &batch.events {
            ev_run.push(run.as_str());
            ev_seq.push(to_i64(*seq));
            ev_text.push(text.as_str());
        }
        let (mut run, mut chat, mut status, mut last) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut notices = Vec::new();
        for r in &batch.runs {
            run.push(r.run_id.as_str());
            chat.push(r.chat_id.as_str());
            status.push(r.status.as_str());
            last.push(to_i64(r.last_seq));
            notices.push(
                json!({ "node": &*self.node, "run": r.run_id, "seq": r.last_seq }).to_string(),
            );
        }
        let c = self.client().await?;
        // A run another node declared lost stays lost: its owner was presumed dead and a
        // `run.error` was appended after its last event.
        c.execute(
            "WITH ev AS (
                 INSERT INTO run_events (run_id, seq, event)
                 SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[])
                 ON CONFLICT DO NOTHING
             ), r AS (
                 INSERT INTO runs (run_id, node, chat_id, status, last_seq, ended_at)
                 SELECT id, $4, chat, st, seq, CASE WHEN st = 'running' THEN NULL ELSE now() END
                 FROM unnest($5::text[], $6::text[], $7::text[], $8::bigint[]) AS t(id, chat, st, seq)
                 ON CONFLICT (run_id) DO UPDATE
                     SET status = EXCLUDED.status, last_seq = EXCLUDED.last_seq,
                         ended_at = EXCLUDED.ended_at
                     WHERE runs.status = 'running' AND runs.node = EXCLUDED.node
             )
             SELECT pg_notify($9, n) FROM unnest($10::text[]) AS n",
            &[&ev_run, &ev_seq, &ev_text, &&*self.node, &run, &chat, &status, &last, &CHANNEL, &notices],
        )
        .await
        .map_err(pg("write run events"))?;
        Ok(())
    }

    /// A run's registry row, with whether its owner still beats (within `alive`).
    pub(crate) async fn run(
        &self,
        run_id: &str,
        alive: Duration,
    ) -> Result<Option<RunRow>, StoreError> {
        let c = self.client().await?;
        let row = c
            .query_opt(
                "SELECT r.run_id, r.node, r.chat_id, r.status, r.last_seq,
                        EXISTS (SELECT 1 FROM nodes n WHERE n.node = r.node
                                AND n.heartbeat_at > now() - make_interval(secs => $2))
                 FROM runs r WHERE r.run_id = $1",
                &[&run_id, &alive.as_secs_f64()],
            )
            .await
            .map_err(pg("read a run"))?;
        Ok(row.map(|r| run_row(&r)))
    }

    /// The newest run in progress on `chat_id` owned by another live node, if any (of those
    /// started before `before`, when given).
    pub(crate) async fn running_run_of_chat(
        &self,
        chat_id: &str,
        alive: Duration,
        before: Option<&str>,
    ) -> Result<Option<RunRow>, StoreError> {
        let c = self.client().await?;
        let row = c
            .query_opt(
                "SELECT r.run_id, r.node, r.chat_id, r.status, r.last_seq, true
                 FROM runs r JOIN nodes n ON n.node = r.node
                 WHERE r.chat_id = $1 AND r.status = 'running' AND r.node <> $2
                   AND n.heartbeat_at > now() - make_interval(secs => $3)
                   AND ($4::text IS NULL OR r.run_id < $4)
                 ORDER BY r.run_id DESC LIMIT 1",
                &[&chat_id, &&*self.node, &alive.as_secs_f64(), &before],
            )
            .await
            .map_err(pg("find the chat's running run"))?;
        Ok(row.map(|r| run_row(&r)))
    }

    /// Up to `limit` events of a run after `after`, in order.
    pub(crate) async fn run_events(
        &self,
        run_id: &str,
        after: u64,
        limit: usize,
    ) -> Result<Vec<(u64, String)>, StoreError> {
        let c = self.client().await?;
        let rows = c
            .query(
                "SELECT seq, event FROM run_events WHERE run_id = $1 AND seq > $2
                 ORDER BY seq LIMIT $3",
                &[&run_id, &to_i64(after), &to_i64(limit as u64)],
            )
            .await
            .map_err(pg("read run events"))?;
        Ok(rows.iter().map(|r| (to_u64(r.get(0)), r.get(1))).collect())
    }

    /// Marks as lost every running run whose owner has not beaten within `alive`, reserving
    /// the seq after its last stored event for the caller's closing event. Each run is
    /// reaped by exactly one caller (one conditional update).
    pub(crate) async fn reap_runs(&self, alive: Duration) -> Result<Vec<RunRow>, StoreError> {
        let c = self.client().await?;
        let rows = c
            .query(
                "UPDATE runs r SET status = 'lost', ended_at = now(),
                     last_seq = coalesce((SELECT max(seq) FROM run_events e
                                          WHERE e.run_id = r.run_id), 0) + 1
                 WHERE r.status = 'running' AND NOT EXISTS (
                     SELECT 1 FROM nodes n WHERE n.node = r.node
                     AND n.heartbeat_at > now() - make_interval(secs => $1))
                 RETURNING r.run_id, r.node, r.chat_id, r.status, r.last_seq, false",
                &[&alive.as_secs_f64()],
            )
            .await
            .map_err(pg("reap runs of dead nodes"))?;
        Ok(rows.iter().map(run_row).collect())
    }

    /// Appends the closing event of a run this node reaped, and tells followers.
    pub(crate) async fn close_lost_run(
        &self,
        run_id: &str,
        seq: u64,
        event: &str,
    ) -> Result<(), StoreError> {
        let notice = json!({ "node": &*self.node, "run": run_id, "seq": seq }).to_string();
        let c = self.client().await?;
        c.execute(
            "WITH ev AS (
                 INSERT INTO run_events (run_id, seq, event) VALUES ($1, $2, $3)
                 ON CONFLICT DO NOTHING
             ) SELECT pg_notify($4, $5)",
            &[&run_id, &to_i64(seq), &event, &CHANNEL, &notice],
        )
        .await
        .map_err(pg("close a lost run"))?;
        Ok(())
    }

    /// Drops ended runs older than `retention` with their events, events beyond the newest
    /// `max_events` of any run, answered requests older than a minute and nodes silent for
    /// an hour.
    pub(crate) async fn prune_runs(
        &self,
        retention: Duration,
        max_events: usize,
    ) -> Result<(), StoreError> {
        let c = self.client().await?;
        c.batch_execute(&format!(
            "DELETE FROM run_events e USING runs r WHERE e.run_id = r.run_id
                 AND (r.ended_at < now() - make_interval(secs => {secs})
                      OR e.seq <= r.last_seq - {max_events});
             DELETE FROM runs WHERE ended_at < now() - make_interval(secs => {secs});
             DELETE FROM run_requests WHERE created_at < now() - interval '1 minute';
             DELETE FROM nodes WHERE heartbeat_at < now() - interval '1 hour';",
            secs = retention.as_secs_f64(),
        ))
        .await
        .map_err(pg("prune old runs"))?;
        Ok(())
    }

    /// Files a request for `node` (a run's owner) and tells it; returns the request's id.
    pub(crate) async fn request(
        &self,
        node: &str,
        run_id: &str,
        kind: &str,
        body: &str,
    ) -> Result<i64, StoreError> {
        let c = self.client().await?;
        let row = c
            .query_one(
                "WITH q AS (
                     INSERT INTO run_requests (node, run_id, kind, body)
                     VALUES ($1, $2, $3, $4) RETURNING id
                 )
                 SELECT id, pg_notify($5, json_build_object('node', $6::text, 'to', $1::text,
                                                            'request', id)::text)::text
                 FROM q",
                &[&node, &run_id, &kind, &body, &CHANNEL, &&*self.node],
            )
            .await
            .map_err(pg("file a run request"))?;
        Ok(row.get(0))
    }

    /// A request addressed to this node: its run, kind and body.
    pub(crate) async fn request_for_me(
        &self,
        id: i64,
    ) -> Result<Option<(String, String, String)>, StoreError> {
        let c = self.client().await?;
        let row = c
            .query_opt(
                "SELECT run_id, kind, body FROM run_requests
                 WHERE id = $1 AND node = $2 AND answer IS NULL",
                &[&id, &&*self.node],
            )
            .await
            .map_err(pg("read a run request"))?;
        Ok(row.map(|r| (r.get(0), r.get(1), r.get(2))))
    }

    /// Answers a request and tells the node that filed it.
    pub(crate) async fn answer(&self, id: i64, answer: &str) -> Result<(), StoreError> {
        let c = self.client().await?;
        c.execute(
            "WITH a AS (UPDATE run_requests SET answer = $2 WHERE id = $1 RETURNING id)
             SELECT pg_notify($3, json_build_object('node', $4::text, 'answer', id)::text)
             FROM a",
            &[&id, &answer, &CHANNEL, &&*self.node],
        )
        .await
        .map_err(pg("answer a run request"))?;
        Ok(())
    }

    /// The answer to a request, once there is one.
    pub(crate) async fn answer_of(&self, id: i64) -> Result<Option<String>, StoreError> {
        let c = self.client().await?;
        let row = c
            .query_opt("SELECT answer FROM run_requests WHERE id = $1", &[&id])
            .await
            .map_err(pg("read a request's answer"))?;
        Ok(row.and_then(|r| r.get(0)))
    }
}

fn run_row(r: &tokio_postgres::Row) -> RunRow {
    let status: &str = r.get(3);
    RunRow {
        run_id: r.get(0),
        node: r.get(1),
        chat_id: r.get(2),
        status: RunStatus::from_db(status),
        last_seq: to_u64(r.get(4)),
        owner_alive: r.get(5),
    }
}
