//! Dashboards as documents: the `DashboardState` model with its alert rules, its validation (structure, rules and the
//! per-type panel data contract), diffs between versions, three-way merges for drafts, the
//! export document and CSV, and the compact summary for models.
//!
//! Pure and synchronous: knows nothing of storage, the sandbox, HTTP or WebSockets.

pub mod alerts;
pub mod data;
pub mod diff;
pub mod export;
pub mod merge;
pub mod state;
pub mod summary;
pub mod validate;

pub use alerts::AlertRule;
pub use diff::{ChangeEntry, ChangeKind};
pub use state::{
    DashboardState, Layout, Panel, PanelLayout, PanelType, Renderer, Variable, VariableType,
};
pub use validate::{InvalidState, Issue};
