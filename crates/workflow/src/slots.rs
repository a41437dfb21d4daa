//! Who may run: the workflow runs in progress, the run slots they hold and the caps.
//!
//! A run holds one of `BOARDSMITH_WORKFLOW_MAX_RUNS` slots while it works. A run *parked* on
//! a human node — every node it has in flight is a `human` node waiting for `POST /api/submit`
//! — gives its slot back, so abandoned approvals cannot starve everyone else's runs. The answer
//! takes a slot again before it is delivered ([`Slots::admit_answer`], the agent service's
//! submit gate): with none free the submit is refused (429) and the run stays parked, its node
//! still waiting, so the same answer can be sent again. Parked runs are still bounded: by
//! each human node's timeout and the run's `timeoutMs`, and per API key by
//! `BOARDSMITH_WORKFLOW_MAX_RUNS_PER_KEY`, which counts a key's runs parked or not (the
//! owner, who holds the server's one secret, has no per-key cap).
//!
//! The engine tells how many nodes a run has in flight ([`Slots::in_flight`]) after each
//! scheduling step, a human node marks itself parked for as long as it waits
//! ([`Slots::park`]); a run is parked when both counts agree.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio_util::sync::CancellationToken;

use super::WorkflowError;
use agent::service::SubmitGate;

/// One run in progress.
#[derive(Debug)]
struct Live {
    cancel: CancellationToken,
    /// The API key it runs for (`None`: the owner).
    caller: Option<String>,
    /// Holds one of the run slots.
    slot: bool,
    /// Nodes in flight, as the engine last said.
    in_flight: usize,
    /// Of those, human nodes waiting for an answer.
    parked: usize,
}

#[derive(Debug, Default)]
struct State {
    runs: HashMap<String, Live>,
    /// Slots held.
    held: usize,
}

impl State {
    /// Gives `run_id`'s slot back when all its nodes in flight wait on a human.
    fn settle(&mut self, run_id: &str) {
        if let Some(run) = self.runs.get_mut(run_id)
            && run.slot
            && run.parked > 0
            && run.parked >= run.in_flight
        {
            run.slot = false;
            self.held -= 1;
            tracing::debug!(run = run_id, "a workflow run parked on a human node left its slot");
        }
    }
}

/// The runs in progress and their slots.
#[derive(Debug)]
pub struct Slots {
    state: Mutex<State>,
    /// Runs holding a slot at once (`BOARDSMITH_WORKFLOW_MAX_RUNS`).
    max_runs: usize,
    /// Runs of one API key, parked ones included (`BOARDSMITH_WORKFLOW_MAX_RUNS_PER_KEY`).
    max_per_key: usize,
}

impl Slots {
    /// No runs yet.
    pub fn new(max_runs: usize, max_per_key: usize) -> Self {
        Self { state: Mutex::default(), max_runs, max_per_key }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn no_slot(&self, held: usize) -> String {
        format!(
            "{held} workflow runs are in progress, the most this server runs at once \
             (BOARDSMITH_WORKFLOW_MAX_RUNS; runs waiting on a human node do not count); try \
             again when one has finished",
        )
    }

    /// Registers `run_id` with a slot, or refuses it: no slot free, or its key has its share of
    /// runs, or it is already running.
    pub fn admit(
        &self,
        run_id: &str,
        caller: Option<&str>,
        cancel: CancellationToken,
    ) -> Result<(), WorkflowError> {
        let mut state = self.lock();
        if state.runs.contains_key(run_id) {
            return Err(WorkflowError::Conflict(format!("workflow run `{run_id}` is running")));
        }
        if state.held >= self.max_runs {
            return Err(WorkflowError::Busy(self.no_slot(state.held)));
        }
        if let Some(key) = caller {
            let mine = state.runs.values().filter(|r| r.caller.as_deref() == Some(key)).count();
            if mine >= self.max_per_key {
                return Err(WorkflowError::Busy(format!(
                    "API key `{key}` has {mine} workflow runs in progress or waiting on a human \
                     node, the most one key may have (BOARDSMITH_WORKFLOW_MAX_RUNS_PER_KEY); \
                     answer, cancel or wait for one"
                )));
            }
        }
        state.held += 1;
        state.runs.insert(
            run_id.to_owned(),
            Live { cancel, caller: caller.map(str::to_owned), slot: true, in_flight: 0, parked: 0 },
        );
        Ok(())
    }

    /// Forgets a run that ended (its slot, if it held one, is free).
    pub fn finish(&self, run_id: &str) {
        let mut state = self.lock();
        if let Some(run) = state.runs.remove(run_id)
            && run.slot
        {
            state.held -= 1;
        }
    }

    /// Whether `run_id` is in progress here.
    pub fn contains(&self, run_id: &str) -> bool {
        self.lock().runs.contains_key(run_id)
    }

    /// Cancels a run in progress; false if it is not.
    pub fn cancel(&self, run_id: &str) -> bool {
        match self.lock().runs.get(run_id) {
            Some(run) => {
                run.cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// Runs in progress, parked ones included.
    pub fn len(&self) -> usize {
        self.lock().runs.len()
    }

    /// Whether no run is in progress.
    pub fn is_empty(&self) -> bool {
        self.lock().runs.is_empty()
    }

    /// Slots held (runs in progress and not parked).
    pub fn held(&self) -> usize {
        self.lock().held
    }

    /// The engine's count of `run_id`'s nodes in flight, after a scheduling step.
    pub fn in_flight(&self, run_id: &str, nodes: usize) {
        let mut state = self.lock();
        if let Some(run) = state.runs.get_mut(run_id) {
            run.in_flight = nodes;
        }
        state.settle(run_id);
    }

    /// Marks one human node of `run_id` as waiting until the returned guard is dropped.
    pub fn park(self: &Arc<Self>, run_id: &str) -> Parked {
        let mut state = self.lock();
        if let Some(run) = state.runs.get_mut(run_id) {
            run.parked += 1;
        }
        state.settle(run_id);
        Parked { slots: Arc::clone(self), run_id: run_id.to_owned() }
    }

    /// Before an answer reaches `run_id`: a parked run takes a slot back (`Ok(true)`: taken,
    /// give it back with [`Slots::undo_answer`] if the answer is not delivered); a run that
    /// holds one, or is not a workflow run here, takes nothing. With no slot free: refused,
    /// the run stays parked.
    pub fn admit_answer(&self, run_id: &str) -> Result<bool, String> {
        let mut state = self.lock();
        let held = state.held;
        let Some(run) = state.runs.get_mut(run_id) else { return Ok(false) };
        if run.slot {
            return Ok(false);
        }
        if held >= self.max_runs {
            return Err(format!(
                "workflow run `{run_id}` waits on a human node and has no run slot to go on \
                 with: {}; the node keeps waiting, send the answer again",
                self.no_slot(held)
            ));
        }
        run.slot = true;
        state.held += 1;
        Ok(true)
    }

    /// An answer [`Slots::admit_answer`] took a slot for was not delivered: parked again.
    pub fn undo_answer(&self, run_id: &str) {
        self.lock().settle(run_id);
    }
}

impl SubmitGate for Slots {
    fn admit(&self, run_id: &str) -> Result<bool, String> {
        self.admit_answer(run_id)
    }

    fn undo(&self, run_id: &str) {
        self.undo_answer(run_id);
    }
}

/// A human node waiting (see [`Slots::park`]).
#[derive(Debug)]
pub struct Parked {
    slots: Arc<Slots>,
    run_id: String,
}

impl Drop for Parked {
    fn drop(&mut self) {
        let mut state = self.slots.lock();
        if let Some(run) = state.runs.get_mut(&self.run_id) {
            run.parked = run.parked.saturating_sub(1);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn admit(slots: &Slots, run: &str, key: Option<&str>) -> Result<(), WorkflowError> {
        slots.admit(run, key, CancellationToken::new())
    }

    #[test]
    fn a_parked_run_leaves_its_slot_and_an_answer_takes_one_back() {
        let slots = Arc::new(Slots::new(1, 8));
        admit(&slots, "a", None).unwrap();
        assert!(matches!(admit(&slots, "b", None), Err(WorkflowError::Busy(_))));
        slots.in_flight("a", 1);
        let parked = slots.park("a");
        assert_eq!(slots.held(), 0, "parked: no slot");
        admit(&slots, "b", None).unwrap();
        // No slot for the answer while b runs: refused, a stays parked.
        let refused = slots.admit_answer("a").unwrap_err();
        assert!(refused.contains("send the answer again"), "{refused}");
        slots.finish("b");
        assert_eq!(slots.admit_answer("a"), Ok(true));
        assert_eq!(slots.held(), 1);
        // The answer not delivered after all: parked again.
        slots.undo_answer("a");
        assert_eq!(slots.held(), 0);
        assert_eq!(slots.admit_answer("a"), Ok(true));
        drop(parked);
        slots.in_flight("a", 1);
        assert_eq!(slots.held(), 1, "a running node keeps the slot");
        slots.finish("a");
        assert_eq!((slots.held(), slots.len()), (0, 0));
        assert_eq!(slots.admit_answer("gone"), Ok(false), "not a run here: nothing to take");
    }

    #[test]
    fn a_run_with_other_nodes_running_keeps_its_slot() {
        let slots = Arc::new(Slots::new(4, 8));
        admit(&slots, "a", None).unwrap();
        slots.in_flight("a", 2);
        let _parked = slots.park("a");
        assert_eq!(slots.held(), 1, "the other branch still runs");
        slots.in_flight("a", 1);
        assert_eq!(slots.held(), 0, "only the human node is left");
    }

    #[test]
    fn a_key_has_its_share_of_runs_parked_or_not_and_the_owner_none() {
        let slots = Arc::new(Slots::new(16, 2));
        for run in ["a", "b"] {
            admit(&slots, run, Some("k1")).unwrap();
            slots.in_flight(run, 1);
            std::mem::forget(slots.park(run));
        }
        let e = admit(&slots, "c", Some("k1")).unwrap_err().to_string();
        assert!(e.contains("BOARDSMITH_WORKFLOW_MAX_RUNS_PER_KEY"), "{e}");
        admit(&slots, "d", Some("k2")).unwrap();
        for run in ["e", "f", "g"] {
            admit(&slots, run, None).unwrap();
        }
        assert!(matches!(admit(&slots, "d", None), Err(WorkflowError::Conflict(_))));
    }
}
