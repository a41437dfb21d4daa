//! Teams: an agent file whose `type` is not `single` names member agents (by key) and how they
//! work together — `sequential` (each member's answer is passed on to the next), `parallel`
//! (members answer side by side; a `merger` member, or concatenation, makes the answer),
//! `routing` (a classifier call picks one member), `supervisor` (the file is itself an agent whose
//! tools are its members, looping until it answers). The team's `budget` (steps, model calls,
//! tokens, time) holds for the whole team run, every member's calls included.
//!
//! Pure: the file's team fields, their validation with field paths and the resolved [`Team`] and
//! [`TeamBudget`]. Whether the members exist is a question for the catalog when a run starts
//! (files come and go independently); running a team is the service's (`service/team.rs`).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use super::{BudgetOverride, is_valid_key};
use crate::field_error::FieldError;
use llm::Usage;

/// Most members of a team.
pub const MAX_MEMBERS: usize = 8;
/// A team run's wall-clock limit when `budget.timeoutMs` does not say (members are whole agent
/// runs, the dashboard agent's alone may take minutes).
pub const DEFAULT_TIMEOUT_MS: u64 = 600_000;
/// Most model calls of a team run, members included, when `budget.maxModelCalls` does not say.
pub const DEFAULT_MODEL_CALLS: u32 = 100;
/// Most member runs (tasks) of a team run when `budget.maxSteps` does not say.
pub const DEFAULT_STEPS: u32 = 16;

/// `type`: how an agent file's members work together; `single` is an ordinary agent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TeamKind {
    /// An ordinary agent (no members).
    #[default]
    Single,
    /// Members in order, each given the question and the previous member's answer.
    Sequential,
    /// Members at once on the question; a merger member or concatenation answers.
    Parallel,
    /// A classifier call picks one member, which answers.
    Routing,
    /// The file's own agent calls members as tools until it answers.
    Supervisor,
}

impl TeamKind {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Single => "single",
            Self::Sequential => "sequential",
            Self::Parallel => "parallel",
            Self::Routing => "routing",
            Self::Supervisor => "supervisor",
        }
    }

    /// Whether the file's own prompt and mode take part: the supervisor is an agent, a router's
    /// prompt guides its classifier; sequential and parallel teams make no call of their own.
    pub fn needs_mode(self) -> bool {
        matches!(self, Self::Single | Self::Supervisor)
    }
}

/// A validated team: its kind, members and merger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Team {
    /// How the members work together (never `single`).
    #[serde(rename = "type")]
    pub kind: TeamKind,
    /// Member agent keys, in file order, distinct.
    pub members: Vec<String>,
    /// `parallel`: the member that merges the others' answers; `None`: concatenation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merger: Option<String>,
    /// Limits of the whole team run.
    pub budget: TeamBudget,
}

/// Limits of a whole team run, members included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TeamBudget {
    /// Most member runs (`budget.maxSteps`).
    pub max_steps: u32,
    /// Most model calls of every member and the team's own (`budget.maxModelCalls`).
    pub max_model_calls: u32,
    /// Most tokens, input and output, of all those calls (`budget.maxTokens`); `None`: no limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Wall-clock limit of the team run (`budget.timeoutMs`).
    pub timeout_ms: u64,
}

/// The built-in instruction of a routing team's classifier call (the file's own prompt, when
/// it has one, is added as guidance).
pub const ROUTER_PROMPT: &str = "You route a user's message to the one team member best suited \
to answer it. Reply with the member's key only: no other words, no punctuation.";

/// The team fields of an agent file, validated; `None` for `single` (after checking that it has
/// no members). Errors and warnings name the field.
pub fn validate(
    key: &str,
    kind: Option<TeamKind>,
    members: &[String],
    merger: Option<&str>,
    budget: Option<&BudgetOverride>,
    errors: &mut Vec<FieldError>,
    warnings: &mut Vec<FieldError>,
) -> Option<Team> {
    let kind = kind.unwrap_or_default();
    if kind == TeamKind::Single {
        if !members.is_empty() {
            errors.push(FieldError::new(
                "members",
                "a team needs `type`: sequential, parallel, routing or supervisor",
            ));
        }
        if merger.is_some() {
            errors.push(FieldError::new("merger", "only a `parallel` team has a merger"));
        }
        if budget.and_then(|b| b.max_tokens).is_some() {
            warnings.push(FieldError::new("budget.maxTokens", "ignored: applies to teams only"));
        }
        return None;
    }
    let least = if matches!(kind, TeamKind::Parallel | TeamKind::Routing) { 2 } else { 1 };
    if members.len() < least || members.len() > MAX_MEMBERS {
        errors.push(FieldError::new(
            "members",
            format!(
                "a {} team needs {least} to {MAX_MEMBERS} member agent keys (got {})",
                kind.as_str(),
                members.len()
            ),
        ));
    }
    let mut kept: Vec<String> = Vec::new();
    for (i, m) in members.iter().enumerate() {
        let at = format!("members[{i}]");
        let m = m.trim();
        if !is_valid_key(m) {
            errors.push(FieldError::new(at, format!("`{m}` is not an agent key")));
        } else if m == key {
            errors.push(FieldError::new(at, "a team cannot be its own member"));
        } else if kind == TeamKind::Supervisor && m.len() > MAX_SUPERVISED_KEY {
            errors.push(FieldError::new(
                at,
                format!("a supervisor's member keys have at most {MAX_SUPERVISED_KEY} characters (its tool is `ask_<key>`)"),
            ));
        } else if kept.iter().any(|k| k == m) {
            errors.push(FieldError::new(at, format!("`{m}` listed twice")));
        } else {
            kept.push(m.to_owned());
        }
    }
    let merger = merger.map(str::trim).filter(|m| !m.is_empty()).map(str::to_owned);
    if let Some(m) = &merger {
        if kind != TeamKind::Parallel {
            errors.push(FieldError::new("merger", "only a `parallel` team has a merger"));
        } else if !is_valid_key(m) || m == key {
            errors.push(FieldError::new("merger", format!("`{m}` is not another agent's key")));
        }
    }
    let b = budget.cloned().unwrap_or_default();
    let mut ranged = |path: &str, v: Option<i64>, lo: i64, hi: i64| -> Option<u64> {
        let v = v?;
        if (lo..=hi).contains(&v) {
            u64::try_from(v).ok()
        } else {
            errors.push(FieldError::new(path, format!("must be {lo}..={hi} (got {v})")));
            None
        }
    };
    let to32 = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    // maxSteps, maxModelCalls and timeoutMs are range-checked by the definition already.
    let max_tokens = ranged("budget.maxTokens", b.max_tokens, 1, 100_000_000);
    Some(Team {
        kind,
        members: kept,
        merger,
        budget: TeamBudget {
            max_steps: b.max_steps.and_then(|v| u32::try_from(v).ok()).unwrap_or(DEFAULT_STEPS),
            max_model_calls: b
                .max_model_calls
                .and_then(|v| u64::try_from(v).ok())
                .map_or(DEFAULT_MODEL_CALLS, to32),
            max_tokens,
            timeout_ms: b
                .timeout_ms
                .and_then(|v| u64::try_from(v).ok())
                .unwrap_or(DEFAULT_TIMEOUT_MS),
        },
    })
}

/// Longest member key of a supervisor team: its tool is `ask_<key>`, and providers take tool
/// names of at most 64 characters.
pub const MAX_SUPERVISED_KEY: usize = 60;

/// What a team run has used of its [`TeamBudget`], shared by every member run (atomics: members
/// of a parallel team count at once).
#[derive(Debug)]
pub struct Meter {
    budget: TeamBudget,
    tasks: AtomicU32,
    calls: AtomicU32,
    tokens: AtomicU64,
}

impl Meter {
    /// Nothing used yet.
    pub fn new(budget: TeamBudget) -> Self {
        Self {
            budget,
            tasks: AtomicU32::new(0),
            calls: AtomicU32::new(0),
            tokens: AtomicU64::new(0),
        }
    }

    /// The budget.
    pub fn budget(&self) -> &TeamBudget {
        &self.budget
    }

    /// Takes one member run: its number (from 1), or why the budget refuses it.
    pub fn next_task(&self) -> Result<u32, String> {
        self.check()?;
        let n = self.tasks.fetch_add(1, Ordering::SeqCst) + 1;
        if n > self.budget.max_steps {
            return Err(format!(
                "team budget exhausted: maxSteps ({} member runs)",
                self.budget.max_steps
            ));
        }
        Ok(n)
    }

    /// Model calls a member may still make (its own budget caps it further).
    pub fn calls_left(&self) -> u32 {
        self.budget.max_model_calls.saturating_sub(self.calls.load(Ordering::SeqCst))
    }

    /// Counts one finished model call; `Err` once a limit is passed.
    pub fn turn(&self, usage: &Usage) -> Result<(), String> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.tokens.fetch_add(usage.input_tokens + usage.output_tokens, Ordering::SeqCst);
        self.check_passed()
    }

    /// `Err` when no call is left or the tokens are spent.
    fn check(&self) -> Result<(), String> {
        if self.calls.load(Ordering::SeqCst) >= self.budget.max_model_calls {
            return Err(format!(
                "team budget exhausted: maxModelCalls ({})",
                self.budget.max_model_calls
            ));
        }
        self.check_passed()
    }

    /// `Err` when a limit has been passed (members running at once may each make the last
    /// allowed call; the one that passes it ends with this error).
    fn check_passed(&self) -> Result<(), String> {
        if self.calls.load(Ordering::SeqCst) > self.budget.max_model_calls {
            return Err(format!(
                "team budget exhausted: maxModelCalls ({})",
                self.budget.max_model_calls
            ));
        }
        if let Some(max) = self.budget.max_tokens
            && self.tokens.load(Ordering::SeqCst) > max
        {
            return Err(format!("team budget exhausted: maxTokens ({max})"));
        }
        Ok(())
    }

    /// Member runs, model calls and tokens used so far.
    pub fn used(&self) -> (u32, u32, u64) {
        (
            self.tasks.load(Ordering::SeqCst),
            self.calls.load(Ordering::SeqCst),
            self.tokens.load(Ordering::SeqCst),
        )
    }
}

/// The member a classifier's answer names: the whole answer if it is a member's key (case and
/// surrounding punctuation forgiven), else the first member key it mentions as a word.
pub fn pick_member<'a>(answer: &str, members: &'a [String]) -> Option<&'a String> {
    let trimmed =
        answer.trim().trim_matches(|c: char| !c.is_alphanumeric() && c != '_' && c != '-');
    if let Some(m) = members.iter().find(|m| m.eq_ignore_ascii_case(trimmed)) {
        return Some(m);
    }
    let words: Vec<&str> =
        answer.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-')).collect();
    // The earliest mention wins, not the first member in file order.
    words.iter().find_map(|w| members.iter().find(|m| m.eq_ignore_ascii_case(w)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn check(
        kind: Option<TeamKind>,
        members: &[&str],
        merger: Option<&str>,
    ) -> (Option<Team>, Vec<FieldError>) {
        let members: Vec<String> = members.iter().map(|s| (*s).to_owned()).collect();
        let (mut errors, mut warnings) = (Vec::new(), Vec::new());
        let team = validate("desk", kind, &members, merger, None, &mut errors, &mut warnings);
        (team, errors)
    }

    #[test]
    fn a_single_agent_has_no_members() {
        let (team, errors) = check(None, &[], None);
        assert!(team.is_none() && errors.is_empty());
        let (_, errors) = check(None, &["a"], None);
        assert_eq!(errors[0].path, "members");
        let (_, errors) = check(Some(TeamKind::Sequential), &["a"], Some("m"));
        assert_eq!(errors[0].path, "merger");
    }

    #[test]
    fn members_are_checked_one_by_one() {
        let (_, errors) = check(Some(TeamKind::Parallel), &["a", "a", "desk", "no way"], None);
        let paths: Vec<&str> = errors.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, ["members[1]", "members[2]", "members[3]"]);
        let (_, errors) = check(Some(TeamKind::Routing), &["a"], None);
        assert!(errors[0].message.contains("2 to 8"), "{errors:?}");
    }

    #[test]
    fn defaults_fill_the_team_budget() {
        let (team, errors) = check(Some(TeamKind::Supervisor), &["a", "b"], None);
        assert!(errors.is_empty());
        let b = team.unwrap().budget;
        assert_eq!(
            (b.max_steps, b.max_model_calls, b.max_tokens, b.timeout_ms),
            (16, 100, None, 600_000)
        );
    }

    #[test]
    fn a_classifier_answer_names_a_member() {
        let members = vec!["analyst".to_owned(), "macro-writer".to_owned()];
        assert_eq!(pick_member(" Analyst.\n", &members), Some(&members[0]));
        assert_eq!(
            pick_member("I'd send it to macro-writer, not analyst", &members),
            Some(&members[1])
        );
        assert_eq!(pick_member("nobody", &members), None);
    }

    proptest! {
        /// Whatever the model says around it, a key said alone is found, and an answer that
        /// names no member picks none.
        #[test]
        fn picking_never_invents_a_member(noise in "[ .,!?\n]{0,4}", idx in 0usize..3, junk in "[a-z ]{0,20}") {
            let members = vec!["alpha".to_owned(), "beta_2".to_owned(), "gamma-x".to_owned()];
            let said = format!("{noise}{}{noise}", members[idx]);
            prop_assert_eq!(pick_member(&said, &members), Some(&members[idx]));
            let picked = pick_member(&junk, &members);
            prop_assert!(picked.is_none() || junk.split(' ').any(|w| Some(&w.to_owned()) == picked));
        }
    }
}
