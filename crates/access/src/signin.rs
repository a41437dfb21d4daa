//! A person signing in, however they proved who they are (a password, the server token's
//! link, an OpenID provider): the browser's old session ends (a new id at every sign-in, so
//! none is fixed in advance), a new one starts, the account notes when, and the audit trail
//! says who, from where and how. One place, so every door signs in alike.

use std::net::IpAddr;
use std::sync::Arc;

use crate::audit::{Audit, AuditKind, Event};
use crate::principal::Principal;
use crate::sessions::{NewSession, Sessions, Via};
use crate::users::{UserView, Users};
use store::StoreError;

/// What signing in touches.
#[derive(Debug, Clone)]
pub struct SignIns {
    /// Sessions.
    pub sessions: Arc<Sessions>,
    /// Accounts.
    pub users: Arc<Users>,
    /// The trail.
    pub audit: Arc<Audit>,
}

impl SignIns {
    /// `user` signs in `via` from `address`, replacing the session of the cookie the browser
    /// sent (if any); `how` is the audit entry's detail.
    #[base::boxed]
    pub async fn begin(
        &self,
        user: &UserView,
        via: Via,
        address: Option<IpAddr>,
        replacing: Option<&str>,
        how: &str,
    ) -> Result<NewSession, StoreError> {
        if let Some(old) = replacing {
            self.sessions.end(old).await;
        }
        let session = self.sessions.start(user, via, address).await?;
        if let Err(e) = self.users.signed_in(&user.id).await {
            tracing::warn!(error = %e, "noting a sign-in failed");
        }
        let event = Event::new(AuditKind::SignIn)
            .by(&Principal::User(user.person()))
            .from(address)
            .detail(how.to_owned());
        self.audit.record(event).await;
        Ok(session)
    }
}
