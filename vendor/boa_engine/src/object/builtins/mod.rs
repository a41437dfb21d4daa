//! All Rust API wrappers for Boa's ECMAScript objects.
//!
//! The structs available in this module provide functionality to interact with native ECMAScript objects from Rust.

mod jsarray;
mod jsarraybuffer;
mod jsasyncgenerator;
mod jsdataview;
mod jsdate;
mod jsfunction;
mod jsgenerator;
mod jsgeneratorfunction;
mod jsmap;
mod jsmap_iterator;
mod jspromise;
mod jsproxy;
mod jsregexp;
mod jsset;
mod jsset_iterator;
mod jssharedarraybuffer;
mod jstypedarray;
mod jsweakmap;
mod jsweakset;

pub use jsarray::*;
pub use jsarraybuffer::*;
pub use jsasyncgenerator::JsAsyncGenerator;
pub use jsdataview::*;
pub use jsdate::*;
pub use jsfunction::*;
pub use jsgenerator::*;
pub use jsgeneratorfunction::JsGeneratorFunction;
pub use jsmap::*;
pub use jsmap_iterator::*;
pub use jspromise::*;
pub use jsproxy::{JsProxy, JsProxyBuilder, JsRevocableProxy};
pub use jsregexp::JsRegExp;
pub use jsset::*;
pub use jsset_iterator::*;
pub use jssharedarraybuffer::*;
pub use jstypedarray::*;
pub use jsweakmap::JsWeakMap;
pub use jsweakset::JsWeakSet;
