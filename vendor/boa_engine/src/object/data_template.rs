//! Boardsmith patch (performance): plain objects made by the host with a shared layout.
//!
//! [`JsObject::with_object_proto`] gives every object a unique shape (its own property table),
//! and each property the host then adds costs a hash-table insert; an object literal instead
//! starts from the realm's shared shape and its properties are shape transitions shared by all
//! objects created the same way. A host turning rows of data into objects (JSON, database rows)
//! wants the latter: [`DataObjectTemplate`] resolves the transitions once and then creates each
//! object with its property values only.

use boa_gc::{Finalize, Trace};

use crate::{
    Context, JsObject, JsValue,
    builtins::OrdinaryObject,
    object::shape::shared_shape::{TransitionKey, template::ObjectTemplate},
    object::shape::slot::SlotAttributes,
    property::PropertyKey,
};

/// The layout of plain objects: `Object.prototype`, then the given string-keyed data
/// properties, each writable, enumerable and configurable, in the given order. An object
/// created from it is indistinguishable from the object literal `{k1: v1, k2: v2, ...}`.
#[derive(Debug, Clone, Trace, Finalize)]
pub struct DataObjectTemplate {
    template: ObjectTemplate,
    #[unsafe_ignore_trace]
    len: usize,
}

impl DataObjectTemplate {
    /// The layout for these keys, or `None` if one is an array index (those are stored apart)
    /// or a symbol, or if a key repeats.
    #[must_use]
    pub fn new(keys: &[PropertyKey], context: &Context) -> Option<Self> {
        let mut shape = context.intrinsics().templates().ordinary_object().shape().clone();
        for (i, key) in keys.iter().enumerate() {
            if !matches!(key, PropertyKey::String(_)) || keys[..i].contains(key) {
                return None;
            }
            shape = shape.insert_property_transition(TransitionKey {
                property_key: key.clone(),
                attributes: SlotAttributes::WRITABLE
                    | SlotAttributes::ENUMERABLE
                    | SlotAttributes::CONFIGURABLE,
            });
        }
        Some(Self {
            template: ObjectTemplate::new(&shape),
            len: keys.len(),
        })
    }

    /// The number of properties.
    #[must_use]
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Whether the layout has no properties.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A new object whose properties have these values, in key order.
    ///
    /// # Errors
    ///
    /// Gives the values back if there are not as many as keys.
    pub fn create(&self, values: Vec<JsValue>) -> Result<JsObject, Vec<JsValue>> {
        if values.len() == self.len {
            Ok(self.template.create(OrdinaryObject, values))
        } else {
            Err(values)
        }
    }
}
