//! API keys as values and policy: the secret's format (`bsk-` and 43 base62 characters, 256
//! bits), its stored form (a SHA-256 digest and a short prefix to recognise it by, never the
//! secret) and the scopes ([`crate::principal::Principal`] says who a request is).
//!
//! Knows nothing of HTTP or storage: `api_keys` keeps the records, each route declares the
//! scope it needs where it is routed (`server::routes`) and `server::guard` applies it.

use rand::RngCore as _;
use sha2::{Digest as _, Sha256};

pub use base::principal::Scope;

/// The prefix every key starts with.
pub const KEY_PREFIX: &str = "bsk-";

/// Characters shown of a key after [`KEY_PREFIX`] to recognise it in a list.
const SHOWN: usize = 6;

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// A newly made key: the secret (shown once, never stored) and what is stored of it.
pub struct NewKey {
    /// `bsk-…`: given to the caller once.
    pub secret: String,
    /// Its SHA-256 digest, hex.
    pub hash: String,
    /// `bsk-` and its first characters, to recognise it by.
    pub prefix: String,
}

impl std::fmt::Debug for NewKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewKey").field("prefix", &self.prefix).finish_non_exhaustive()
    }
}

impl NewKey {
    /// A new key: `bsk-` and [`random_base62`].
    pub fn generate() -> Self {
        let mut n = random_base62();
        n.insert_str(0, KEY_PREFIX);
        let hash = digest(&n);
        let prefix = n.chars().take(KEY_PREFIX.len() + SHOWN).collect();
        Self { secret: n, hash, prefix }
    }
}

/// 256 random bits from the OS-seeded CSPRNG as 43 base62 characters: the secret part of
/// keys, session cookies and share links.
pub fn random_base62() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    base62(&bytes)
}

/// `bytes` as a base62 number of fixed width (43 digits hold 256 bits), by repeated division.
fn base62(bytes: &[u8; 32]) -> String {
    let mut digits = Vec::with_capacity(43);
    let mut n: Vec<u8> = bytes.to_vec();
    for _ in 0..43 {
        let mut rem: u32 = 0;
        for b in &mut n {
            let cur = (rem << 8) | u32::from(*b);
            *b = u8::try_from(cur / 62).unwrap_or(u8::MAX);
            rem = cur % 62;
        }
        digits.push(BASE62[rem as usize]);
    }
    digits.reverse();
    String::from_utf8(digits).unwrap_or_default()
}

/// The stored form of a presented key: its SHA-256, hex. Keys carry 256 random bits, so a
/// fast digest is enough (a slow password hash protects low-entropy secrets).
pub fn digest(secret: &str) -> String {
    Sha256::digest(secret.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `s` looks like one of our keys (so a wrong one is reported as a wrong key, not a
/// wrong server token).
pub fn looks_like_key(s: &str) -> bool {
    s.strip_prefix(KEY_PREFIX)
        .is_some_and(|rest| rest.len() == 43 && rest.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// Whether `path` is `prefix` or lies below it (`/apix` is not under `/api`).
pub fn under(path: &str, prefix: &str) -> bool {
    path.strip_prefix(prefix).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_are_whole_segments() {
        assert!(under("/api/x", "/api") && under("/api", "/api"));
        assert!(!under("/apix", "/api"), "a prefix is a whole segment");
    }

    #[test]
    fn keys_are_long_random_and_stored_only_as_digests() {
        let a = NewKey::generate();
        let b = NewKey::generate();
        assert_ne!(a.secret, b.secret);
        assert!(looks_like_key(&a.secret), "{}", a.secret);
        assert_eq!(a.secret.len(), 4 + 43);
        assert!(a.secret.starts_with(&a.prefix) && a.prefix.len() == 10);
        assert_eq!(a.hash, digest(&a.secret));
        assert_eq!(a.hash.len(), 64);
        assert!(!format!("{a:?}").contains(&a.secret), "Debug never shows the secret");
        assert!(!looks_like_key("bsk-short"));
    }

    /// Base62 digits back to 32 bytes (big-endian), by repeated multiply-add.
    fn decode(digits: &str) -> [u8; 32] {
        let mut n = [0u8; 32];
        for d in digits.bytes() {
            let mut carry = u32::try_from(BASE62.iter().position(|b| *b == d).unwrap()).unwrap();
            for byte in n.iter_mut().rev() {
                let cur = u32::from(*byte) * 62 + carry;
                *byte = (cur & 0xff) as u8;
                carry = cur >> 8;
            }
            assert_eq!(carry, 0, "overflow");
        }
        n
    }

    #[test]
    fn base62_is_a_bijection_of_the_bytes() {
        assert_eq!(base62(&[0; 32]), "0".repeat(43));
        let mut one = [0; 32];
        one[31] = 61;
        assert!(base62(&one).ends_with("0z"));
        let mut bytes = [0u8; 32];
        for seed in 0..64u8 {
            for (i, b) in bytes.iter_mut().enumerate() {
                *b = seed.wrapping_mul(31).wrapping_add(u8::try_from(i).unwrap().wrapping_mul(97));
            }
            assert_eq!(decode(&base62(&bytes)), bytes);
        }
        assert_eq!(decode(&base62(&[0xff; 32])), [0xff; 32]);
    }
}
