//! Who a request is: the values live in `base::principal` (every layer takes a caller); this
//! module names them where `access` makes them.

pub use base::principal::{Actor, Author, Person, Principal, Role, UserId, Via};

/// A new user id: `u_` and a time-ordered UUID.
pub fn new_user_id() -> UserId {
    UserId::from(format!("u_{}", uuid::Uuid::now_v7().simple()).as_str())
}
