//! `DashboardState`: the document the agent builds. Panels store code, not data.
//!
//! The serde types mirror the wire format exactly (camelCase, unknown fields rejected). Parse
//! untrusted JSON with [`super::validate::parse_state`], which adds the semantic rules and names
//! the JSON path of every problem.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A whole dashboard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DashboardState {
    /// Non-empty title.
    pub title: String,
    /// Grid settings.
    pub layout: Layout,
    /// At most 48 panels, ids unique.
    pub panels: Vec<Panel>,
    /// Dashboard variables; their current values reach panel code as `vars`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variables: Vec<Variable>,
    /// Dashboard-level refresh interval such as `"30s"` or `"5m"` (panels may override).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh: Option<String>,
    /// Alert rules judged on panels' data on every refresh (see [`super::alerts`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alerts: Vec<super::alerts::AlertRule>,
}

/// Grid layout of a dashboard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Layout {
    /// 1..=12 grid columns.
    pub columns: u32,
    /// Gap between panels in pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap: Option<u32>,
}

/// One panel: what to draw and the code that fetches its data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Panel {
    /// Unique slug `[a-z0-9][a-z0-9-]{0,63}`, used to address the panel in edits.
    pub id: String,
    /// Shown above the panel.
    pub title: String,
    /// What kind of visual (closed set).
    #[serde(rename = "type")]
    pub kind: PanelType,
    /// Which front-end library draws it; must match `kind`.
    pub renderer: Renderer,
    /// Panel code: the body of an async function with `sdk`, `utils`, `vars` in scope, returning
    /// data in the shape its type expects.
    pub code: String,
    /// Technical indicators to draw (e.g. `"MA(20)"`), informational.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub indicators: Option<Vec<Value>>,
    /// Renderer options the web app reads: `logScale` (candlestick, line, area), `stacked` and
    /// `horizontal` (bar); other keys are kept and ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<Map<String, Value>>,
    /// Where the data comes from (`{source, method, params}`), informational.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_source: Option<Value>,
    /// Grid span hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<PanelLayout>,
    /// Panel refresh interval, overriding the dashboard's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh: Option<String>,
}

/// Grid span of a panel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PanelLayout {
    /// Columns spanned (1..=layout.columns).
    pub w: u32,
    /// Rows spanned (1..=12).
    pub h: u32,
}

/// The closed set of panel types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PanelType {
    /// OHLC candles.
    Candlestick,
    /// Lines over time.
    Line,
    /// Filled areas over time.
    Area,
    /// Bars by category or time.
    Bar,
    /// A matrix of values.
    Heatmap,
    /// Shares of a whole.
    Pie,
    /// Several dimensions per series.
    Radar,
    /// Points (x, y).
    Scatter,
    /// Rows and columns.
    Table,
    /// A list of timestamped items (news, posts).
    Feed,
    /// One or a few headline numbers.
    MetricCard,
}

/// The closed set of renderers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Renderer {
    /// TradingView lightweight-charts: financial time series.
    #[serde(rename = "lightweight-charts")]
    LightweightCharts,
    /// Apache ECharts: statistical charts.
    #[serde(rename = "echarts")]
    Echarts,
    /// Plain HTML: tables, feeds, metric cards.
    #[serde(rename = "custom")]
    Custom,
}

impl PanelType {
    /// The renderer this type must use.
    pub fn renderer(self) -> Renderer {
        match self {
            Self::Candlestick | Self::Line | Self::Area => Renderer::LightweightCharts,
            Self::Bar | Self::Heatmap | Self::Pie | Self::Radar | Self::Scatter => {
                Renderer::Echarts
            }
            Self::Table | Self::Feed | Self::MetricCard => Renderer::Custom,
        }
    }
}

/// A dashboard variable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Variable {
    /// Key in `vars`, an identifier.
    pub name: String,
    /// Shown in the UI.
    pub label: String,
    /// Input kind.
    #[serde(rename = "type")]
    pub kind: VariableType,
    /// Choices for `select`; `[min, max]` or `[min, max, step]` for `range`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Vec<Value>>,
    /// Initial value (one of `options` for `select`).
    pub default: Value,
}

/// Variable input kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VariableType {
    /// One of `options`.
    Select,
    /// Free text.
    Text,
    /// A number within `options: [min, max(, step)]`.
    Range,
}
