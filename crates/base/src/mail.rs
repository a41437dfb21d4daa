//! The mail relay: the SMTP server e-mail channels send through, as an admin sets it in
//! Settings (`/api/admin/settings`, its password sealed there) or an operator in
//! `boardsmith.toml` (`[smtp]`). Plain data shared by the layer that keeps settings and the one
//! that sends; knows nothing of SMTP itself.

use serde::{Deserialize, Serialize};

/// How the connection to the relay is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum MailSecurity {
    /// Plain SMTP upgraded with STARTTLS, which must succeed (port 587 by default).
    #[default]
    Starttls,
    /// TLS from the first byte, "SMTPS" (port 465 by default).
    Tls,
    /// No encryption at all (port 25 by default): only for a relay on this machine or a
    /// trusted network.
    None,
}

impl MailSecurity {
    /// The usual port of this kind of connection.
    pub fn default_port(self) -> u16 {
        match self {
            Self::Starttls => 587,
            Self::Tls => 465,
            Self::None => 25,
        }
    }
}

/// An SMTP relay.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MailRelay {
    /// The relay's host name (its certificate must name it) or address.
    pub host: String,
    /// Its port; `null`: the usual one for `security` (587, 465 or 25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// `starttls` (default), `tls` or `none`.
    #[serde(default)]
    pub security: MailSecurity,
    /// The user name to sign in with, if the relay wants one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// Its password. Never answered: settings say only whether one is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(write_only)]
    pub password: Option<String>,
    /// The sender, `alerts@example.com` or `Boardsmith <alerts@example.com>`.
    pub from: String,
    /// A PEM file of extra root certificates to trust (a relay with a private CA).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<String>,
}

impl MailRelay {
    /// The port in force.
    pub fn port(&self) -> u16 {
        self.port.unwrap_or_else(|| self.security.default_port())
    }
}
