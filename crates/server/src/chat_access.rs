//! Whose chats are whose: a chat is its first run's person's (`RunRecord._owner`); admins (and
//! the token, and keys from before accounts) see every chat, a person their own. Asked by the
//! chat routes (`agents`) and by `/api/query` before continuing a chat (`query`).

use access::principal::Principal;
use app::App;

use super::ApiError;

/// Whether `who` sees a chat whose owner is `owner`: admins (and the token, and keys from
/// before accounts) see every chat; a person sees their own. A chat from before accounts is
/// the first admin's.
pub(crate) fn sees_chat(who: &Principal, owner: Option<&str>) -> bool {
    who.is_admin()
        || who.person().is_none()
        || owner.is_some_and(|o| who.user_id().is_some_and(|me| me.as_str() == o))
}

/// Refuses, as missing, a stored chat `who` may not see (an unknown id is a new chat).
#[base::boxed]
pub(crate) async fn own_chat(app: &App, who: &Principal, chat_id: &str) -> Result<(), ApiError> {
    if who.is_admin() || who.person().is_none() {
        return Ok(());
    }
    let chats = app.memory.list_chats().await?;
    match chats.iter().find(|c| c.chat_id == chat_id) {
        Some(c) if !sees_chat(who, c.owner.as_deref()) => {
            Err(ApiError::NotFound(format!("chat `{chat_id}` not found")))
        }
        _ => Ok(()),
    }
}
