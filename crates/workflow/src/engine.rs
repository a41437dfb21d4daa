//! The executor: walks a checked [`Graph`] from its start node. A node runs once every incoming
//! edge is resolved (its source finished or was skipped) and at least one was taken; when none
//! was (a `condition` chose another branch) it is skipped, and so on downstream. Ready nodes
//! run concurrently as their own tasks, so the branches of a `parallel` really overlap; a
//! `join` collects the outputs of the predecessors that ran.
//!
//! Every finished node is committed to the run record before its `task.complete` (so a client
//! that saw it can rely on it surviving a crash) and before any successor starts. Bounds:
//! `maxSteps` (node executions, across resumes), `timeoutMs` (this attempt's wall time),
//! `maxTokens` (model tokens), an output size cap per node. One node's failure stops the others
//! (`task.fail` for each) and ends the run with `run.error` naming the node; a cancel ends it
//! with `run.cancel` and starts nothing more.
//!
//! After each scheduling step the engine tells [`Slots`] how many nodes are in flight: a run
//! whose nodes in flight all wait on a human gives its run slot back until an answer comes.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::Deps;
use super::nodes::{NodeCtx, NodeError, NodeKind, NodeResult};
use super::runs::{FinishedNode, RunRecord, RunStatus, Runs};
use super::slots::Slots;
use super::template::Scope;
use super::validate::Graph;
use agent::events::{EventBody, EventSink, TokenUsage, now_ms};

/// Largest output a node may produce (serialized), so run records stay bounded.
pub const MAX_OUTPUT_BYTES: usize = 256 * 1024;

/// One attempt of a run.
pub struct Execution {
    /// The checked workflow.
    pub graph: Arc<Graph>,
    /// The run's record (finished nodes of earlier attempts included).
    pub record: RunRecord,
    /// Services the nodes use.
    pub deps: Arc<Deps>,
    /// Where the record is committed.
    pub runs: Runs,
    /// The attempt's event stream.
    pub sink: Arc<EventSink>,
    /// Cancelled by `POST .../cancel`.
    pub cancel: CancellationToken,
    /// The run slots: told how many nodes are in flight after each scheduling step.
    pub slots: Arc<Slots>,
    /// How long an `llm` or `agent` node waits for an agent run slot.
    pub agent_wait: Duration,
    /// Who the run acts for: its nodes' tools and agents have their rights (`None`: the
    /// owner's).
    pub principal: Option<base::principal::Principal>,
}

#[derive(Debug, Clone)]
enum State {
    Waiting,
    Running,
    Done { output: Arc<Value>, branch: Option<String> },
    Skipped,
    Failed,
}

/// How the attempt ends.
enum End {
    Complete,
    Cancelled,
    Failed(Value),
}

/// Runs the attempt to its end; returns the run's final status.
#[base::boxed]
pub async fn execute(mut x: Execution) -> RunStatus {
    let run_id = x.record.run_id.clone();
    x.sink.emit(EventBody::RunStart { run_id: run_id.clone(), chat_id: run_id.clone() });
    let graph = Arc::clone(&x.graph);
    let n = graph.nodes.len();
    let mut state = vec![State::Waiting; n];
    for f in &x.record.finished {
        if let Some(i) = graph.index(&f.node) {
            state[i] = State::Done { output: Arc::new(f.output.clone()), branch: f.branch.clone() };
        }
    }
    let inputs = Arc::new(x.record.inputs.clone());
    let budget = graph.budget();
    let deadline = tokio::time::Instant::now() + Duration::from_millis(budget.timeout_ms);
    let nodes_cancel = x.cancel.child_token();
    let mut tasks: JoinSet<(usize, Result<NodeResult, NodeError>)> = JoinSet::new();
    let end = 'run: loop {
        for i in settle(&graph, &mut state) {
            if x.cancel.is_cancelled() {
                break;
            }
            if x.record.steps >= budget.max_steps {
                let message = format!(
                    "budget exhausted: maxSteps ({}) reached before node `{}`",
                    budget.max_steps, graph.nodes[i].id
                );
                break 'run End::Failed(json!({ "message": message, "node": graph.nodes[i].id }));
            }
            x.record.steps += 1;
            state[i] = State::Running;
            let node = &graph.nodes[i];
            x.sink.emit(EventBody::TaskStart {
                task_id: node.id.clone(),
                run_id: run_id.clone(),
                task_name: Some(node.id.clone()),
                description: Some(node.config.kind().name().to_owned()),
            });
            let ctx = NodeCtx {
                run_id: run_id.clone(),
                node_id: node.id.clone(),
                task_id: node.id.clone(),
                index: i,
                caller: x.record.caller.clone(),
                scope: Scope { inputs: Arc::clone(&inputs), outputs: outputs(&graph, &state) },
                preds: preds(&graph, &state, i),
                deps: Arc::clone(&x.deps),
                sink: Arc::clone(&x.sink),
                cancel: nodes_cancel.clone(),
                slots: Arc::clone(&x.slots),
                agent_wait: x.agent_wait,
                principal: x.principal.clone(),
            };
            let graph = Arc::clone(&graph);
            // Counted before it exists, so a human node parking at once sees its siblings.
            x.slots.in_flight(&run_id, tasks.len() + 1);
            tasks.spawn(async move {
                let result = graph.nodes[i].config.run(&ctx).await;
                (i, result)
            });
        }
        // Whether the run is parked (only human nodes waiting) is decided on this count, which
        // a finished node left too high until now (never too low: a slot is left only late).
        x.slots.in_flight(&run_id, tasks.len());
        if tasks.is_empty() {
            if x.cancel.is_cancelled() {
                break 'run End::Cancelled;
            }
            break 'run End::Complete;
        }
        tokio::select! {
            biased;
            () = x.cancel.cancelled() => break 'run End::Cancelled,
            () = tokio::time::sleep_until(deadline) => {
                break 'run End::Failed(json!({
                    "message": format!("budget exhausted: timeoutMs ({}) passed", budget.timeout_ms),
                }));
            }
            joined = tasks.join_next() => {
                let Some(joined) = joined else { continue 'run };
                let (i, result) = match joined {
                    Ok(pair) => pair,
                    Err(e) => {
                        // A node's task panicked: which one is lost with it; stop the run.
                        tracing::error!(run = %run_id, error = %e, "a workflow node's task failed");
                        break 'run End::Failed(json!({ "message": "a node's task failed unexpectedly" }));
                    }
                };
                let id = graph.nodes[i].id.clone();
                match result.and_then(|r| checked(&graph, i, r)) {
                    Ok(r) => {
                        let output = Arc::new(r.output);
                        state[i] = State::Done { output: Arc::clone(&output), branch: r.branch.clone() };
                        x.record.finished.push(FinishedNode {
                            node: id.clone(),
                            output: output.as_ref().clone(),
                            branch: r.branch,
                            finished_at: now_ms(),
                        });
                        add(&mut x.record.usage, &r.usage);
                        x.record.updated_at = now_ms();
                        if let Err(e) = x.runs.save(&x.record).await {
                            tracing::error!(run = %run_id, error = %e, "committing a workflow node failed");
                            state[i] = State::Failed;
                            x.sink.emit(task_fail(&id, &run_id, json!({"message": "storing its output failed"})));
                            break 'run End::Failed(json!({ "message": format!("storing the output of node `{id}` failed"), "node": id }));
                        }
                        x.sink.emit(EventBody::TaskComplete { task_id: id.clone(), run_id: run_id.clone() });
                        let used = x.record.usage.input_tokens + x.record.usage.output_tokens;
                        if let Some(max) = budget.max_tokens.filter(|&m| used > m) {
                            break 'run End::Failed(json!({
                                "message": format!("budget exhausted: maxTokens ({max}) passed: {used} tokens after node `{id}`"),
                                "node": id,
                            }));
                        }
                    }
                    Err(e) => {
                        state[i] = State::Failed;
                        let mut error = json!({ "message": e.message });
                        if let Some(d) = &e.detail {
                            error["detail"] = d.clone();
                        }
                        x.sink.emit(task_fail(&id, &run_id, error.clone()));
                        let mut run_error = json!({
                            "message": format!("node `{id}` failed: {}", e.message),
                            "node": id,
                        });
                        if let Some(d) = e.detail {
                            run_error["detail"] = d;
                        }
                        break 'run End::Failed(run_error);
                    }
                }
            }
        }
    };
    // Nothing more starts; the nodes still running stop now, each with its task.fail.
    nodes_cancel.cancel();
    tasks.abort_all();
    while tasks.join_next().await.is_some() {}
    let why = match &end {
        End::Cancelled => "cancelled",
        _ => "stopped: the run ended",
    };
    for (i, s) in state.iter().enumerate() {
        if matches!(s, State::Running) {
            x.sink.emit(task_fail(&graph.nodes[i].id, &run_id, json!({ "message": why })));
        }
    }
    let (status, event) = match end {
        End::Complete => (
            RunStatus::Completed,
            EventBody::RunComplete {
                run_id: run_id.clone(),
                finish_reason: Some("stop".to_owned()),
                usage: Some(x.record.usage),
                failing_panels: Vec::new(),
            },
        ),
        End::Cancelled => (RunStatus::Cancelled, EventBody::RunCancel { run_id: run_id.clone() }),
        End::Failed(error) => {
            x.record.error = Some(error.clone());
            (RunStatus::Failed, EventBody::RunError { run_id: run_id.clone(), error })
        }
    };
    x.record.status = status;
    x.record.updated_at = now_ms();
    if let Err(e) = x.runs.save(&x.record).await {
        tracing::error!(run = %run_id, error = %e, "committing the end of a workflow run failed");
        x.sink.emit(EventBody::RunError {
            run_id,
            error: json!({ "message": format!("storing the run's end failed: {e}") }),
        });
        return RunStatus::Failed;
    }
    x.sink.emit(event);
    status
}

fn task_fail(task: &str, run_id: &str, error: Value) -> EventBody {
    EventBody::TaskFail { task_id: task.to_owned(), run_id: run_id.to_owned(), error: Some(error) }
}

fn add(total: &mut TokenUsage, more: &TokenUsage) {
    total.input_tokens += more.input_tokens;
    total.output_tokens += more.output_tokens;
    total.reasoning_tokens += more.reasoning_tokens;
    total.cache_read_tokens += more.cache_read_tokens;
    total.cache_write_tokens += more.cache_write_tokens;
}

/// A node's result as the run may keep it: bounded in size, and a condition's value must
/// match one of its edges (or it has a default).
fn checked(graph: &Graph, i: usize, r: NodeResult) -> Result<NodeResult, NodeError> {
    let bytes = serde_json::to_vec(&r.output).map_or(0, |v| v.len());
    if bytes > MAX_OUTPUT_BYTES {
        return Err(NodeError::new(format!(
            "its output is {bytes} bytes; a node's output may be at most {MAX_OUTPUT_BYTES}"
        )));
    }
    if graph.nodes[i].config.kind() == NodeKind::Condition
        && let Some(branch) = &r.branch
    {
        let edges: Vec<&Option<String>> =
            graph.outgoing[i].iter().map(|&k| &graph.edges[k].when).collect();
        let matches = edges.iter().any(|w| w.as_deref().is_none_or(|w| w == branch));
        if !matches {
            let whens: Vec<&str> = edges.iter().filter_map(|w| w.as_deref()).collect();
            return Err(NodeError::new(format!(
                "value `{branch}` matches no edge (`when`: {}) and there is no default edge",
                whens.join(", ")
            )));
        }
    }
    Ok(r)
}

/// Whether edge `k` was taken: `None` while its source has not finished.
fn taken(graph: &Graph, state: &[State], k: usize) -> Option<bool> {
    let e = &graph.edges[k];
    match &state[e.from] {
        State::Done { branch, .. } => Some(match branch {
            Some(b) if graph.nodes[e.from].config.kind() == NodeKind::Condition => match &e.when {
                Some(w) => w == b,
                // The default edge: taken when no sibling's `when` matched.
                None => !graph.outgoing[e.from]
                    .iter()
                    .any(|&o| graph.edges[o].when.as_deref() == Some(b.as_str())),
            },
            _ => true,
        }),
        State::Skipped | State::Failed => Some(false),
        State::Waiting | State::Running => None,
    }
}

/// Marks the nodes no taken edge can reach any more as skipped and returns those ready to
/// run, in definition order.
fn settle(graph: &Graph, state: &mut [State]) -> Vec<usize> {
    loop {
        let mut changed = false;
        let mut ready = Vec::new();
        for i in 0..graph.nodes.len() {
            if !matches!(state[i], State::Waiting) {
                continue;
            }
            if graph.incoming[i].is_empty() {
                ready.push(i);
                continue;
            }
            let mut resolved = true;
            let mut any = false;
            for &k in &graph.incoming[i] {
                match taken(graph, state, k) {
                    None => resolved = false,
                    Some(t) => any |= t,
                }
            }
            if !resolved {
                continue;
            }
            if any {
                ready.push(i);
            } else {
                state[i] = State::Skipped;
                changed = true;
            }
        }
        if !changed {
            return ready;
        }
    }
}

fn outputs(graph: &Graph, state: &[State]) -> HashMap<String, Arc<Value>> {
    state
        .iter()
        .enumerate()
        .filter_map(|(i, s)| match s {
            State::Done { output, .. } => Some((graph.nodes[i].id.clone(), Arc::clone(output))),
            _ => None,
        })
        .collect()
}

/// The predecessors of `i` that ran and whose edge to it was taken, in edge order.
fn preds(graph: &Graph, state: &[State], i: usize) -> Vec<(String, Arc<Value>)> {
    graph.incoming[i]
        .iter()
        .filter(|&&k| taken(graph, state, k) == Some(true))
        .filter_map(|&k| match &state[graph.edges[k].from] {
            State::Done { output, .. } => {
                Some((graph.nodes[graph.edges[k].from].id.clone(), Arc::clone(output)))
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::nodes::CheckContext;
    use crate::validate::validate;

    fn graph(v: Value) -> Graph {
        validate(&crate::def::parse(&v.to_string()).unwrap(), &CheckContext::default()).unwrap()
    }

    fn done(v: Value, branch: Option<&str>) -> State {
        State::Done { output: Arc::new(v), branch: branch.map(str::to_owned) }
    }

    #[test]
    fn a_condition_takes_its_matching_edge_and_skips_the_rest_downstream() {
        let g = graph(json!({
            "name": "c",
            "nodes": [
                {"id": "c", "type": "condition", "value": "x"},
                {"id": "yes", "type": "code", "code": "return 1"},
                {"id": "no", "type": "code", "code": "return 1"},
                {"id": "after_no", "type": "code", "code": "return 1"},
                {"id": "end", "type": "code", "code": "return 1"}
            ],
            "edges": [
                {"from": "c", "to": "yes", "when": "y"}, {"from": "c", "to": "no"},
                {"from": "no", "to": "after_no"},
                {"from": "yes", "to": "end"}, {"from": "after_no", "to": "end"}
            ]
        }));
        let mut state = vec![State::Waiting; 5];
        assert_eq!(settle(&g, &mut state), vec![0]);
        state[0] = done(json!("y"), Some("y"));
        assert_eq!(settle(&g, &mut state), vec![1], "only the matching branch");
        assert!(matches!(state[2], State::Skipped) && matches!(state[3], State::Skipped));
        state[1] = done(json!(1), None);
        assert_eq!(settle(&g, &mut state), vec![4], "a merge runs after the branch taken");
        assert_eq!(preds(&g, &state, 4).len(), 1);
    }

    #[test]
    fn a_join_waits_for_every_branch() {
        let g = graph(json!({
            "name": "p",
            "nodes": [
                {"id": "p", "type": "parallel"},
                {"id": "a", "type": "code", "code": "return 1"},
                {"id": "b", "type": "code", "code": "return 2"},
                {"id": "j", "type": "join"}
            ],
            "edges": [{"from": "p", "to": "a"}, {"from": "p", "to": "b"}, {"from": "a", "to": "j"}, {"from": "b", "to": "j"}]
        }));
        let mut state = vec![State::Waiting; 4];
        state[0] = done(Value::Null, None);
        assert_eq!(settle(&g, &mut state), vec![1, 2], "both branches at once");
        state[1] = done(json!(1), None);
        state[2] = State::Running;
        assert!(settle(&g, &mut state).is_empty(), "the join waits for b");
        state[2] = done(json!(2), None);
        assert_eq!(settle(&g, &mut state), vec![3]);
        let p: Vec<String> = preds(&g, &state, 3).into_iter().map(|(id, _)| id).collect();
        assert_eq!(p, ["a", "b"]);
    }

    #[test]
    fn a_condition_value_without_an_edge_fails_the_node() {
        let g = graph(json!({
            "name": "c",
            "nodes": [{"id": "c", "type": "condition", "value": "x"}, {"id": "a", "type": "code", "code": "return 1"}],
            "edges": [{"from": "c", "to": "a", "when": "go"}]
        }));
        let r = NodeResult {
            output: json!("stop"),
            branch: Some("stop".into()),
            ..NodeResult::default()
        };
        let e = checked(&g, 0, r).unwrap_err();
        assert!(e.message.contains("matches no edge (`when`: go)"), "{e:?}");
    }
}
