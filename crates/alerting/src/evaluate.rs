//! Judging one observed run: every rule on its panel, once per fan-out value (running the
//! panel again with that value's variables), declaratively or by the rule's code in the
//! sandbox, then the state machine and the transition's notification.

use serde_json::{Map, Value};

use dashboard::Panel;
use dashboard::alerts::{
    AlertRule, Noise, Observation, Reading, Reason, Transition, When, fan_key, fan_out, judge,
};
use live::PanelRun;

use super::{Alerting, Notification, Observed, state_key};

/// Largest panel data handed to a rule's code, in bytes of JSON.
const MAX_CODE_DATA: usize = 4 * 1024 * 1024;

/// The variable values of one judgement: `defaults` (those of the scheduled run), the rule's
/// `vars`, the fan-out value.
fn values(
    defaults: &Map<String, Value>,
    rule: &AlertRule,
    fan: Option<&Value>,
) -> Map<String, Value> {
    let mut vars = defaults.clone();
    for (k, v) in rule.vars.iter().flatten() {
        if vars.contains_key(k) {
            vars.insert(k.clone(), v.clone());
        }
    }
    if let (Some(name), Some(v)) = (&rule.for_each, fan) {
        vars.insert(name.clone(), v.clone());
    }
    vars
}

/// The analyst's sentence for a failed run: the provider's summary, else the error.
fn failure(error: &sandbox::ExecError) -> String {
    error.outage.as_ref().map_or_else(|| error.message.clone(), |o| o.summary.clone())
}

impl Alerting {
    pub(super) async fn judge(&self, job: Observed) {
        let Some(panel) = job.state.panels.iter().find(|p| p.id == job.panel) else { return };
        let defaults = self.dashboards.live().vars(&job.id, &job.state);
        let mut batch = Vec::new();
        for rule in job.state.alerts.iter().filter(|r| r.panel_id == job.panel) {
            let fans: Vec<Option<Value>> = match fan_out(rule, &job.state.variables) {
                None => vec![None],
                Some(vals) => vals.into_iter().map(Some).collect(),
            };
            for fan in fans {
                let vars = values(&defaults, rule, fan.as_ref());
                let own;
                let run = if vars == defaults {
                    &job.run
                } else {
                    own = self.dashboards.live().run_fresh(&job.id, panel, &vars).await;
                    &own
                };
                let key = fan.as_ref().map(fan_key);
                batch.extend(self.judge_one(&job, panel, rule, key, run, &vars).await);
            }
        }
        self.send(batch);
    }

    async fn judge_one(
        &self,
        job: &Observed,
        panel: &Panel,
        rule: &AlertRule,
        key: Option<String>,
        run: &PanelRun,
        vars: &Map<String, Value>,
    ) -> Option<Notification> {
        let fan = key.clone().unwrap_or_default();
        let before = self.state_of(&state_key(&job.id, &rule.id, &fan)).await;
        let seen = match &run.result {
            Err(e) => Observation::Failed(failure(e)),
            Ok(ok) => match &rule.when {
                When::Condition(c) => match judge(c, panel.kind, &ok.data, before.value) {
                    Ok(r) => Observation::Judged(r),
                    Err(e) => Observation::Failed(e),
                },
                When::Code(code) => self.run_rule_code(code, &ok.data, vars).await,
            },
        };
        let now = chrono::Utc::now().timestamp_millis();
        let (mut after, transition) = before.step(seen, rule.hold(), now);
        let silence = self.silences.covering(&job.id, &rule.id, key.as_deref()).await;
        let noise =
            Noise { repeat: rule.repeat(), silenced: silence.is_some(), ..self.config.noise };
        let mut out = None;
        if let Some(told) = after.tell(transition, noise, now) {
            let threshold = match &rule.when {
                When::Condition(c) => Some(c.value),
                When::Code(_) => None,
            };
            let muted = match (told.send, &silence) {
                (true, _) => None,
                (false, Some(_)) => Some("silenced"),
                (false, None) if after.flapping_since.is_some() => Some("flapping"),
                (false, None) => Some("unchanged"),
            };
            let message = match (told.status, told.reason) {
                (Transition::Firing, Reason::Reminder) => {
                    format!("still firing: {}", after.message)
                }
                (Transition::Resolved, _) => format!("resolved: {}", after.message),
                (Transition::Firing, _) => after.message.clone(),
            };
            let message = if told.reason == Reason::Flapping {
                format!(
                    "{message} (flapping: {} changes within {}; nothing more is sent until it \
                     holds one state for {})",
                    after.flips.len(),
                    humantime::format_duration(noise.flap_window),
                    humantime::format_duration(noise.settle)
                )
            } else {
                message
            };
            out = self
                .record(Notification {
                    id: format!("{}/{}/{fan}/{}", job.id, rule.id, after.transitions),
                    status: told.status,
                    dashboard_id: job.id.clone(),
                    dashboard_title: job.state.title.clone(),
                    panel_id: panel.id.clone(),
                    panel_title: panel.title.clone(),
                    rule_id: rule.id.clone(),
                    rule_name: rule.name.clone(),
                    severity: rule.severity(),
                    key: key.clone(),
                    value: after.value,
                    threshold,
                    message,
                    at: now,
                    link: format!("/#d={}", job.id),
                    notify: rule.notify.clone(),
                    deliveries: Vec::new(),
                    reason: told.reason,
                    muted: muted.map(str::to_owned),
                    silence: silence.filter(|_| !told.send),
                })
                .await;
        }
        self.keep(&job.id, &rule.id, &fan, &before, after).await;
        out
    }

    /// Runs a rule's `when` code with `data` and `vars`; its result must be
    /// `{firing: boolean, value?: number, message?: string}`.
    async fn run_rule_code(
        &self,
        code: &str,
        data: &Value,
        vars: &Map<String, Value>,
    ) -> Observation {
        let json = data.to_string();
        if json.len() > MAX_CODE_DATA {
            return Observation::Failed(format!(
                "the panel's data is {} bytes; rule code takes at most {MAX_CODE_DATA}",
                json.len()
            ));
        }
        // The body runs as a function of `data` (and `vars`, in scope like in panel code).
        let program = format!("return await (async (data) => {{\n{code}\n}})({json});");
        let run = self.dashboards.live().run_code(&program, vars).await;
        match run.result {
            Err(e) => Observation::Failed(format!("the rule's code failed: {}", e.message)),
            Ok(ok) => match reading_of(&ok.data) {
                Ok(r) => Observation::Judged(r),
                Err(e) => Observation::Failed(e),
            },
        }
    }
}

/// A rule code's result as a reading.
fn reading_of(v: &Value) -> Result<Reading, String> {
    let expected = "rule code must return {firing: boolean, value?: number, message?: string}";
    let Some(o) = v.as_object() else {
        return Err(format!("{expected}, got {v}"));
    };
    let Some(firing) = o.get("firing").and_then(Value::as_bool) else {
        return Err(format!("{expected}; `firing` is missing or not a boolean"));
    };
    let value = match o.get("value") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => n.as_f64(),
        Some(other) => return Err(format!("{expected}; `value` is {other}")),
    };
    let message = match o.get("message") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.chars().take(500).collect(),
        Some(other) => return Err(format!("{expected}; `message` is {other}")),
    };
    Ok(Reading { firing, value, message })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rule_code_results_are_checked() {
        let r = reading_of(&json!({"firing": true, "value": 3, "message": "hot"})).unwrap();
        assert_eq!((r.firing, r.value, r.message.as_str()), (true, Some(3.0), "hot"));
        assert!(reading_of(&json!({"firing": "yes"})).unwrap_err().contains("`firing`"));
        assert!(reading_of(&json!(true)).unwrap_err().contains("must return"));
        assert!(
            reading_of(&json!({"firing": false, "value": "x"})).unwrap_err().contains("`value`")
        );
    }
}
