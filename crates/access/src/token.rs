//! The server's one secret: set by the operator (`BOARDSMITH_TOKEN`, `[server] token`) or
//! generated on first start and kept in `<data dir>/token` (mode 0600), so a restart keeps the
//! browser's session and the scripts' `Authorization` header valid.
//!
//! Knows nothing of HTTP: it loads, stores and compares the secret.

use std::fs;
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use rand::RngCore as _;
use subtle::ConstantTimeEq as _;

use super::AccessError;

/// The file under the data directory that holds a generated token.
pub const TOKEN_FILE: &str = "token";

/// Shortest token an operator may configure (a generated one has 64 hex digits).
pub const MIN_TOKEN_LEN: usize = 16;

/// The server's secret. Its `Debug` never prints it; compare with [`ServerToken::matches`].
#[derive(Clone, PartialEq, Eq)]
pub struct ServerToken(String);

impl std::fmt::Debug for ServerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServerToken(***)")
    }
}

impl ServerToken {
    /// An operator-given token; too short or with characters that do not survive a URL or a
    /// header unescaped is an error naming `origin` (where it came from).
    pub fn configured(value: &str, origin: &str) -> Result<Self, AccessError> {
        let value = value.trim();
        if value.len() < MIN_TOKEN_LEN {
            return Err(AccessError::Config(format!(
                "{origin}: the token must be at least {MIN_TOKEN_LEN} characters"
            )));
        }
        if !value.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b)) {
            return Err(AccessError::Config(format!(
                "{origin}: the token may only contain A-Z a-z 0-9 - . _ ~"
            )));
        }
        Ok(Self(value.to_owned()))
    }

    /// 32 random bytes from the OS-seeded CSPRNG, as 64 hex digits.
    pub fn generate() -> Self {
        let mut bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut bytes);
        Self(bytes.iter().map(|b| format!("{b:02x}")).collect())
    }

    /// The token in `<data_dir>/token`, created (0600, written to a temp file and renamed, so a
    /// crash never leaves half a token) when missing or unusable. A file others can read is
    /// tightened to 0600.
    pub fn load_or_create(data_dir: &Path) -> Result<Self, AccessError> {
        let path = data_dir.join(TOKEN_FILE);
        let io = |e: std::io::Error| AccessError::TokenFile { path: path.clone(), source: e };
        match fs::read_to_string(&path) {
            Ok(text) => {
                if let Ok(token) = Self::configured(&text, "token file") {
                    let meta = fs::metadata(&path).map_err(io)?;
                    if meta.permissions().mode() & 0o077 != 0 {
                        tracing::warn!(path = %path.display(), "token file was readable by others; set to 0600");
                        base::fs_private::tighten(&path).map_err(io)?;
                    }
                    return Ok(token);
                }
                tracing::warn!(path = %path.display(), "token file is unusable; writing a new token");
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(e)),
        }
        let token = Self::generate();
        write_private(&path, &token.0).map_err(io)?;
        Ok(token)
    }

    /// Whether `candidate` is this token, in time independent of where they differ.
    pub fn matches(&self, candidate: &str) -> bool {
        // Lengths are public (a generated token's length is documented); the bytes are not.
        self.0.len() == candidate.len() && bool::from(self.0.as_bytes().ct_eq(candidate.as_bytes()))
    }

    /// The secret itself, for the sign-in URL and the programs that need to send it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

/// Writes `text` to `path` through a 0600 temp file in the same directory and a rename.
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp: PathBuf = path.with_extension(format!("tmp{}", std::process::id()));
    let mut file =
        base::fs_private::options().write(true).create(true).truncate(true).open(&tmp)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    drop(file);
    fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent() {
        fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_tokens_are_long_distinct_and_hex() {
        let (a, b) = (ServerToken::generate(), ServerToken::generate());
        assert_eq!(a.expose().len(), 64);
        assert!(a.expose().bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
        assert_eq!(format!("{a:?}"), "ServerToken(***)");
    }

    #[test]
    fn matches_only_the_exact_token() {
        let t = ServerToken::configured("abcdefghijklmnop", "test").unwrap();
        assert!(t.matches("abcdefghijklmnop"));
        assert!(!t.matches("abcdefghijklmnoq"));
        assert!(!t.matches("abcdefghijklmno"));
        assert!(!t.matches("abcdefghijklmnopq"));
        assert!(!t.matches(""));
    }

    #[test]
    fn configured_tokens_must_be_long_and_url_safe() {
        assert!(ServerToken::configured("short", "env").is_err());
        assert!(ServerToken::configured("has space in the middle", "env").is_err());
        assert!(ServerToken::configured("semi;colon-is-not-ok", "env").is_err());
        assert!(ServerToken::configured("  padded-token-1234567  ", "env").is_ok());
    }

    #[test]
    fn the_token_file_is_private_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let first = ServerToken::load_or_create(dir.path()).unwrap();
        let meta = fs::metadata(dir.path().join(TOKEN_FILE)).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(ServerToken::load_or_create(dir.path()).unwrap(), first);

        // Readable by others: tightened, same token.
        fs::set_permissions(dir.path().join(TOKEN_FILE), fs::Permissions::from_mode(0o644))
            .unwrap();
        assert_eq!(ServerToken::load_or_create(dir.path()).unwrap(), first);
        let meta = fs::metadata(dir.path().join(TOKEN_FILE)).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);

        // Unusable (truncated): replaced.
        fs::write(dir.path().join(TOKEN_FILE), "abc").unwrap();
        let replaced = ServerToken::load_or_create(dir.path()).unwrap();
        assert_ne!(replaced, first);
        assert_eq!(replaced.expose().len(), 64);
    }
}
