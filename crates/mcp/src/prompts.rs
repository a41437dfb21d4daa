//! The prompts: `build_dashboard {topic}` ("build a dashboard for …") and `fix_dashboard
//! {dashboard_id}` ("fix the failing panels of …", with each failing panel's error and code
//! filled in from its latest run, so the client's model starts from the facts).

use rmcp::ErrorData;
use rmcp::model::{GetPromptResult, JsonObject, Prompt, PromptArgument, PromptMessage, Role};
use serde_json::json;

use dashboard_agent::describe;
use dashboards::Dashboards;
use live::RunStatus;
use store::StoreError;

/// The prompts, as `prompts/list` shows them.
pub fn list() -> Vec<Prompt> {
    vec![
        Prompt::new(
            "build_dashboard",
            Some("Build a live dashboard for a topic with the dashboard tools"),
            Some(vec![
                PromptArgument::new("topic")
                    .with_description("What the dashboard is about, e.g. \"gold vs the dollar\"")
                    .with_required(true),
            ]),
        )
        .with_title("Build a dashboard for …"),
        Prompt::new(
            "fix_dashboard",
            Some("Fix the panels of a dashboard whose latest run failed"),
            Some(vec![
                PromptArgument::new("dashboard_id")
                    .with_description("The dashboard (resources/list names them)")
                    .with_required(true),
            ]),
        )
        .with_title("Fix the failing panels of …"),
    ]
}

/// The prompt `name` with `arguments`.
#[base::boxed]
pub async fn get(
    dashboards: &Dashboards,
    name: &str,
    arguments: Option<&JsonObject>,
) -> Result<GetPromptResult, ErrorData> {
    let arg = |key: &str| -> Result<String, ErrorData> {
        arguments
            .and_then(|a| a.get(key))
            .and_then(|v| v.as_str())
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| {
                ErrorData::invalid_params(
                    format!("prompt `{name}` needs the argument `{key}` (a non-empty string)"),
                    Some(json!({ "param": key })),
                )
            })
    };
    let (description, text) = match name {
        "build_dashboard" => {
            let topic = arg("topic")?;
            (format!("Build a dashboard for {topic}"), build_text(&topic))
        }
        "fix_dashboard" => {
            let id = arg("dashboard_id")?;
            (format!("Fix the failing panels of {id}"), fix_text(dashboards, &id).await?)
        }
        other => {
            return Err(ErrorData::invalid_params(
                format!("no prompt `{other}`; prompts are build_dashboard and fix_dashboard"),
                Some(json!({ "param": "name" })),
            ));
        }
    };
    Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
        .with_description(description))
}

fn build_text(topic: &str) -> String {
    format!(
        "Build a Boardsmith dashboard for: {topic}\n\n\
         1. Call `search` with code over `spec` (e.g. `return spec.find(\"{topic}\", 5)`) to find \
         data sources and methods; read a method's params before using it.\n\
         2. Call `execute` with builder code that returns a DashboardState whose panels carry \
         `code` (JavaScript that fetches the data through `sdk`, never the data itself).\n\
         3. Read `validation` in the result: for every panel with status `error`, fix its code \
         with `mutate` (`(state) => newState`) and check again.\n\
         4. Say which sources serve each panel, and whether any is demo data (`demo: true` in \
         the spec): never present demo numbers as real."
    )
}

async fn fix_text(dashboards: &Dashboards, id: &str) -> Result<String, ErrorData> {
    let results = dashboards.data(id).await.map_err(|e| match e {
        StoreError::NotFound(_) | StoreError::Deleted(_) => ErrorData::invalid_params(
            format!("`dashboard_id`: {e}"),
            Some(json!({ "param": "dashboard_id" })),
        ),
        e => ErrorData::internal_error(e.to_string(), None),
    })?;
    // The state the results belong to: the code quoted is the code that failed.
    let mut failing = String::new();
    for p in &results.state.panels {
        let Some(slot) = results.panels.get(&p.id) else { continue };
        if slot.status != RunStatus::Error {
            continue;
        }
        let error = slot.error.as_ref().map(describe).unwrap_or_default();
        failing.push_str(&format!(
            "\n### Panel `{}` ({})\nError: {error}\nCode:\n```js\n{}\n```\n",
            p.id, p.title, p.code
        ));
    }
    if failing.is_empty() {
        return Ok(format!(
            "Dashboard `{id}` (version {}) has no failing panels: every panel's latest run \
             succeeded. Check it with `get_state {{\"dashboard_id\": \"{id}\"}}` and report that \
             nothing needs fixing.",
            results.version
        ));
    }
    Ok(format!(
        "Fix the failing panels of dashboard `{id}` (version {}). Their latest runs failed:\n\
         {failing}\n\
         Use `search` to check the sources and params the code uses, then one `mutate` call \
         with `dashboard_id: \"{id}\"` that rewrites only these panels' `code`. Read the \
         `validation` it returns and repeat until every panel succeeds, then say what was wrong.",
        results.version
    ))
}
