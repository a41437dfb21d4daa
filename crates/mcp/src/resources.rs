//! The resources: `boardsmith://dashboards` (the list), `boardsmith://dashboards/{id}` (one
//! dashboard: its state, version and panels' latest status) and `boardsmith://sources/{name}`
//! (a data source's spec as `search` sees it). JSON text throughout.

use rmcp::ErrorData;
use rmcp::model::{Resource, ResourceContents, ResourceTemplate};
use serde_json::{Value, json};

use access::principal::Principal;
use dashboard_agent::describe;
use dashboards::{Change, ChangeKind, Dashboards};
use sdk::Sdk;
use store::StoreError;

const SCHEME: &str = "boardsmith://";
/// The dashboard list.
pub const DASHBOARDS: &str = "boardsmith://dashboards";
const JSON: &str = "application/json";

/// What a URI names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Uri<'a> {
    /// The dashboard list.
    Dashboards,
    /// One dashboard.
    Dashboard(&'a str),
    /// One data source's spec.
    Source(&'a str),
}

impl<'a> Uri<'a> {
    /// Parses a `boardsmith://` URI; `None` for anything else.
    pub fn parse(uri: &'a str) -> Option<Self> {
        let rest = uri.strip_prefix(SCHEME)?;
        let one = |prefix: &str| {
            rest.strip_prefix(prefix).filter(|s| !s.is_empty() && !s.contains(['/', '?', '#']))
        };
        if rest == "dashboards" {
            Some(Self::Dashboards)
        } else if let Some(id) = one("dashboards/") {
            Some(Self::Dashboard(id))
        } else {
            one("sources/").map(Self::Source)
        }
    }
}

/// The URI of dashboard `id`.
pub fn dashboard_uri(id: &str) -> String {
    format!("{DASHBOARDS}/{id}")
}

/// The URIs whose content a change alters; and whether the list of resources changed.
pub fn touched(change: &Change) -> (Vec<String>, bool) {
    let one = dashboard_uri(&change.id);
    match change.kind {
        // A new version changes the list too (title, version, updated time).
        ChangeKind::Saved(_) => (vec![one, DASHBOARDS.to_owned()], false),
        ChangeKind::Created(_) | ChangeKind::Deleted | ChangeKind::Restored => {
            (vec![one, DASHBOARDS.to_owned()], true)
        }
    }
}

/// Every concrete resource `who` may see: the list, each live dashboard, each data source.
#[base::boxed]
pub async fn list(
    dashboards: &Dashboards,
    sdk: &Sdk,
    who: &Principal,
) -> Result<Vec<Resource>, ErrorData> {
    let mut out = vec![
        Resource::new(DASHBOARDS, "dashboards")
            .with_title("Dashboards")
            .with_description("Every dashboard: id, title, version, panels, last update")
            .with_mime_type(JSON),
    ];
    let seen = dashboards.list(false).await.map_err(internal)?;
    for d in seen.into_iter().filter(|d| dashboards.sharing().sees(who, &d.id)) {
        out.push(
            Resource::new(dashboard_uri(&d.id), d.id.clone())
                .with_title(d.title.clone())
                .with_description(format!(
                    "Dashboard \"{}\": state (panels with their code), version {}, panel status",
                    d.title, d.version
                ))
                .with_mime_type(JSON),
        );
    }
    for s in sources(sdk) {
        let name = s["name"].as_str().unwrap_or_default();
        out.push(
            Resource::new(format!("{SCHEME}sources/{name}"), format!("source:{name}"))
                .with_title(s["displayName"].as_str().unwrap_or(name).to_owned())
                .with_description(s["description"].as_str().unwrap_or_default().to_owned())
                .with_mime_type(JSON),
        );
    }
    Ok(out)
}

/// The URI templates (for clients that build URIs themselves).
pub fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(format!("{DASHBOARDS}/{{id}}"), "dashboard")
            .with_title("A dashboard")
            .with_description("A dashboard's state, version and panels' latest status")
            .with_mime_type(JSON),
        ResourceTemplate::new(format!("{SCHEME}sources/{{name}}"), "source")
            .with_title("A data source")
            .with_description("A data source's methods, parameters and providers")
            .with_mime_type(JSON),
    ]
}

/// Reads `uri` for `who` (a dashboard it may not see is not found).
#[base::boxed]
pub async fn read(
    dashboards: &Dashboards,
    sdk: &Sdk,
    uri: &str,
    who: &Principal,
) -> Result<ResourceContents, ErrorData> {
    let value = match Uri::parse(uri) {
        Some(Uri::Dashboards) => {
            let list = dashboards.list(false).await.map_err(internal)?;
            let rows: Vec<Value> = list
                .iter()
                .filter(|d| dashboards.sharing().sees(who, &d.id))
                .map(|d| {
                    json!({
                        "id": d.id, "title": d.title, "version": d.version, "panels": d.panels,
                        "updatedAt": d.updated_at, "uri": dashboard_uri(&d.id),
                    })
                })
                .collect();
            json!({ "dashboards": rows })
        }
        Some(Uri::Dashboard(id)) if !dashboards.sharing().sees(who, id) => {
            return Err(not_found(uri));
        }
        Some(Uri::Dashboard(id)) => dashboard(dashboards, id).await.map_err(|e| match e {
            StoreError::NotFound(_) | StoreError::Deleted(_) => not_found(uri),
            e => internal(e),
        })?,
        Some(Uri::Source(name)) => {
            sources(sdk).into_iter().find(|s| s["name"] == name).ok_or_else(|| not_found(uri))?
        }
        None => return Err(not_found(uri)),
    };
    Ok(ResourceContents::text(value.to_string(), uri).with_mime_type(JSON))
}

/// A live dashboard with its panels' latest results (status, rows, error; not the rows).
async fn dashboard(dashboards: &Dashboards, id: &str) -> Result<Value, StoreError> {
    let (rec, state) = dashboards.current(id).await?;
    let slots = dashboards.live().slots(id);
    let panels: Vec<Value> = state
        .panels
        .iter()
        .map(|p| {
            let slot = slots.get(&p.id);
            json!({
                "panelId": p.id,
                "status": slot.map(|s| s.status),
                "error": slot.and_then(|s| s.error.as_ref()).map(describe),
            })
        })
        .collect();
    Ok(json!({
        "id": rec.id, "version": rec.version, "updatedAt": rec.updated_at,
        "state": *state, "panelStatus": panels,
    }))
}

fn sources(sdk: &Sdk) -> Vec<Value> {
    match sdk.public_json() {
        Value::Object(mut o) => match o.remove("sources") {
            Some(Value::Array(a)) => a,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

fn not_found(uri: &str) -> ErrorData {
    ErrorData::resource_not_found(
        format!(
            "no resource `{uri}`; resources are {DASHBOARDS}, {DASHBOARDS}/{{id}} and \
             {SCHEME}sources/{{name}} (resources/list names them)"
        ),
        Some(json!({ "uri": uri })),
    )
}

fn internal(e: StoreError) -> ErrorData {
    ErrorData::internal_error(e.to_string(), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_parse_strictly() {
        assert_eq!(Uri::parse("boardsmith://dashboards"), Some(Uri::Dashboards));
        assert_eq!(Uri::parse("boardsmith://dashboards/db_1"), Some(Uri::Dashboard("db_1")));
        assert_eq!(Uri::parse("boardsmith://sources/gold"), Some(Uri::Source("gold")));
        for bad in [
            "boardsmith://dashboards/",
            "boardsmith://dashboards/a/b",
            "boardsmith://sources/",
            "boardsmith://other",
            "http://dashboards/x",
            "boardsmith://dashboards/x?y",
        ] {
            assert_eq!(Uri::parse(bad), None, "{bad}");
        }
        assert_eq!(Uri::parse(&dashboard_uri("d9")), Some(Uri::Dashboard("d9")));
    }

    #[test]
    fn a_new_version_touches_the_dashboard_and_the_list_but_not_the_resource_set() {
        let saved = Change { id: "d".into(), kind: ChangeKind::Saved(2) };
        assert_eq!(touched(&saved), (vec![dashboard_uri("d"), DASHBOARDS.to_owned()], false));
        let created = Change { id: "d".into(), kind: ChangeKind::Created(1) };
        assert!(touched(&created).1);
    }
}
