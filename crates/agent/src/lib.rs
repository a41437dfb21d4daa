//! The agent runtime: JSON-defined agents and their catalog (agents, tools, viewports on disk,
//! hot reloaded), tools (backend, action, frontend), the run loop and its six modes, the Event
//! Model v2 stream and chat memory. It knows nothing of HTTP: the gateway maps requests to runs
//! and runs' events to SSE.

pub mod catalog;
pub mod chats;
pub mod cluster;
pub mod definition;
pub mod events;
pub mod field_error;
pub mod memory;
pub mod message;
pub mod prompt_template;
pub mod run;
pub mod service;
pub mod summary;
pub mod template;
pub mod tools;

/// The team block of agent files, where it always was on the outside.
pub use definition::team;
