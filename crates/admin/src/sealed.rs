//! Secrets at rest: provider keys saved through the admin API are sealed with
//! XChaCha20-Poly1305 under a 256-bit key kept in its own file (`<data>/secret.key`, mode
//! 0600), apart from the database, so a copy of the database alone reveals no provider key.
//!
//! A sealed value is `v1:` + hex(24-byte random nonce ‖ ciphertext ‖ tag). Knows nothing of
//! what is sealed or where sealed values are kept.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use rand::RngCore as _;

/// The key file's name in the data directory.
pub const KEY_FILE: &str = "secret.key";

const PREFIX: &str = "v1:";
const NONCE: usize = 24;

/// Why a value could not be sealed or opened, or the key not loaded.
#[derive(Debug, thiserror::Error)]
pub enum SealError {
    /// The key file could not be read or created.
    #[error("key file {}: {message}", path.display())]
    KeyFile {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The value is not one this server sealed (another key file, or damaged).
    #[error(
        "a sealed value cannot be opened: it was sealed under another key file or is damaged; \
         save the provider key again"
    )]
    Open,
}

/// Seals and opens values under one key.
pub struct Sealer {
    cipher: XChaCha20Poly1305,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealer(***)")
    }
}

impl Sealer {
    /// The sealer of `dir`'s key file, creating the file (32 random bytes, mode 0600) when
    /// absent.
    pub fn in_dir(dir: &Path) -> Result<Self, SealError> {
        let path = dir.join(KEY_FILE);
        let fail = |message: String| SealError::KeyFile { path: path.clone(), message };
        let key = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let mut key = vec![0u8; 32];
                rand::rng().fill_bytes(&mut key);
                let mut file = base::fs_private::options()
                    .write(true)
                    .create_new(true)
                    .open(&path)
                    .map_err(|e| fail(e.to_string()))?;
                file.write_all(&key)
                    .and_then(|()| file.sync_all())
                    .map_err(|e| fail(e.to_string()))?;
                key
            }
            Err(e) => return Err(fail(e.to_string())),
        };
        let cipher = XChaCha20Poly1305::new_from_slice(&key)
            .map_err(|_| fail(format!("expected 32 bytes, found {}", key.len())))?;
        Ok(Self { cipher })
    }

    /// `plain`, sealed.
    pub fn seal(&self, plain: &str) -> String {
        let mut nonce = [0u8; NONCE];
        rand::rng().fill_bytes(&mut nonce);
        // Encryption fails only past the cipher's length limit (256 GiB): unreachable here.
        let sealed =
            self.cipher.encrypt(&XNonce::from(nonce), plain.as_bytes()).unwrap_or_default();
        let mut out = String::with_capacity(PREFIX.len() + 2 * (NONCE + sealed.len()));
        out.push_str(PREFIX);
        for b in nonce.iter().chain(&sealed) {
            out.push_str(&format!("{b:02x}"));
        }
        out
    }

    /// The plain text of a value [`Self::seal`] made under the same key.
    pub fn open(&self, sealed: &str) -> Result<String, SealError> {
        let hex = sealed.strip_prefix(PREFIX).ok_or(SealError::Open)?;
        if hex.len() % 2 != 0 || hex.len() < 2 * NONCE {
            return Err(SealError::Open);
        }
        let bytes = (0..hex.len())
            .step_by(2)
            .map(|i| {
                u8::from_str_radix(hex.get(i..i + 2).ok_or(SealError::Open)?, 16)
                    .map_err(|_| SealError::Open)
            })
            .collect::<Result<Vec<u8>, _>>()?;
        let (nonce, body) = bytes.split_at(NONCE);
        let nonce = XNonce::try_from(nonce).map_err(|_| SealError::Open)?;
        let plain = self.cipher.decrypt(&nonce, body).map_err(|_| SealError::Open)?;
        String::from_utf8(plain).map_err(|_| SealError::Open)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_value_opens_only_under_its_own_key_and_never_shows_the_secret() {
        let dir = tempfile::tempdir().unwrap();
        let sealer = Sealer::in_dir(dir.path()).unwrap();
        let sealed = sealer.seal("sk-live-1234567890");
        assert!(sealed.starts_with("v1:"));
        assert!(!sealed.contains("sk-live"));
        assert_ne!(sealed, sealer.seal("sk-live-1234567890"), "a fresh nonce each time");
        assert_eq!(sealer.open(&sealed).unwrap(), "sk-live-1234567890");
        // Reloaded from the same file: same key.
        assert_eq!(
            Sealer::in_dir(dir.path()).unwrap().open(&sealed).unwrap(),
            "sk-live-1234567890"
        );
        // Another directory's key, a flipped bit, garbage: refused.
        let other = Sealer::in_dir(tempfile::tempdir().unwrap().path()).unwrap();
        assert!(matches!(other.open(&sealed), Err(SealError::Open)));
        let mut flipped = sealed.clone().into_bytes();
        let last = flipped.len() - 1;
        flipped[last] = if flipped[last] == b'0' { b'1' } else { b'0' };
        assert!(sealer.open(&String::from_utf8(flipped).unwrap()).is_err());
        for bad in ["", "v1:", "v1:zz", "v2:00", "v1:é"] {
            assert!(sealer.open(bad).is_err(), "{bad}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn the_key_file_is_readable_by_the_owner_only() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        Sealer::in_dir(dir.path()).unwrap();
        let mode = std::fs::metadata(dir.path().join(KEY_FILE)).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
