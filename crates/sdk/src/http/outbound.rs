//! Where the `http` backing may connect (SSRF protection).
//!
//! - **Hosts.** A request, and every redirect hop, goes only to a host declared by the spec
//!   files (the authority of each `url`, and of the value of its `baseUrlEnv` variable, both
//!   operator configuration) or listed in `BOARDSMITH_OUTBOUND_ALLOW` ([`Outbound::check`]).
//! - **Addresses.** Loopback, private, link-local (cloud metadata), CGNAT, unspecified,
//!   multicast and reserved addresses, and the IPv6 forms that embed them, are refused
//!   ([`non_public`]): for IP-literal URLs before sending, and for every address a name resolves
//!   to at connect time ([`Resolver`]), so DNS rebinding cannot get around it. A host listed in
//!   `BOARDSMITH_OUTBOUND_ALLOW`, or `BOARDSMITH_OUTBOUND_ALLOW_PRIVATE=1`, lifts this rule.
//!
//! This module never reads the environment ([`crate::SdkConfig`] does) and never sends a
//! request itself.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use futures::future::BoxFuture;
use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// The variable listing extra allowed hosts (and the hosts whose private addresses are allowed).
pub const ALLOW_VAR: &str = "BOARDSMITH_OUTBOUND_ALLOW";
/// The variable that allows private, loopback and link-local addresses for every allowed host.
pub const ALLOW_PRIVATE_VAR: &str = "BOARDSMITH_OUTBOUND_ALLOW_PRIVATE";

/// An outbound request that was not sent. The message says which setting would allow it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// The URL's scheme is neither `http` nor `https`.
    #[error("`{url}` is not an http(s) URL; data sources only make http and https requests")]
    Scheme {
        /// Scheme and host of the refused URL.
        url: String,
    },
    /// The host (and port) is not on the allowlist.
    #[error(
        "{}`{authority}` is not an allowed outbound host: data sources may only reach the hosts \
         declared in their spec files; if the user wants this host reachable, they can add \
         `{authority}` to {ALLOW_VAR} and restart",
        if *redirect { "redirected to " } else { "" }
    )]
    Host {
        /// `host:port` of the refused request.
        authority: String,
        /// Whether the host came from a redirect's `Location`.
        redirect: bool,
    },
    /// The host is, or resolves only to, an address that is not public.
    #[error(
        "`{host}` {}a {kind} address, which data sources may not reach; if this is intended, \
         the user can add `{host}` to {ALLOW_VAR} (or set {ALLOW_PRIVATE_VAR}=1) and restart",
        if host == &addr.to_string() { String::from("is ") } else { format!("resolves to {addr}, ") }
    )]
    Address {
        /// The host as written in the URL.
        host: String,
        /// The refused address.
        addr: IpAddr,
        /// Which kind of non-public address (`loopback`, `private`, ...).
        kind: &'static str,
    },
}

/// One allowlist entry: a host (lowercase; IPv6 without brackets) and, optionally, a port.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct AllowedHost {
    host: String,
    port: Option<u16>,
}

impl AllowedHost {
    /// The authority (`host` and the port, explicit or the scheme's default) of an absolute URL.
    pub fn of_url(url: &Url) -> Option<Self> {
        let host = host_key(url)?;
        Some(Self { host, port: url.port_or_known_default() })
    }

    fn matches(&self, host: &str, port: Option<u16>) -> bool {
        self.host == host && (self.port.is_none() || self.port == port)
    }
}

impl std::str::FromStr for AllowedHost {
    type Err = String;

    /// `host`, `host:port`, `[v6]`, `[v6]:port`, or a URL (`https://host:port/...`, whose
    /// scheme's default port applies when none is given).
    fn from_str(entry: &str) -> Result<Self, String> {
        let entry = entry.trim();
        let bad = || format!("`{entry}` is not a host, host:port or URL");
        if entry.contains("://") {
            let url = Url::parse(entry).map_err(|_| bad())?;
            return Self::of_url(&url).ok_or_else(bad);
        }
        // A bare IPv6 address (several colons, no brackets) has no port.
        if let Ok(v6) = entry.parse::<Ipv6Addr>() {
            return Ok(Self { host: v6.to_string(), port: None });
        }
        let url = Url::parse(&format!("http://{entry}")).map_err(|_| bad())?;
        if url.path() != "/" || url.query().is_some() || !url.username().is_empty() {
            return Err(bad());
        }
        let host = host_key(&url).ok_or_else(bad)?;
        Ok(Self { host, port: url.port() })
    }
}

impl std::fmt::Display for AllowedHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let host =
            if self.host.contains(':') { format!("[{}]", self.host) } else { self.host.clone() };
        match self.port {
            Some(p) => write!(f, "{host}:{p}"),
            None => f.write_str(&host),
        }
    }
}

/// The URL's host as the allowlist compares it: lowercase name, or the normalised IP text (the
/// URL parser already turned `2130706433`, `0x7f000001` and `0177.0.0.1` into `127.0.0.1`).
fn host_key(url: &Url) -> Option<String> {
    Some(match host_ip(url) {
        Some(ip) => ip.to_string(),
        None => url.host_str()?.trim_end_matches('.').to_ascii_lowercase(),
    })
}

/// The address of an IP-literal URL (`host_str` is dotted decimal or a bracketed IPv6 address).
fn host_ip(url: &Url) -> Option<IpAddr> {
    let host = url.host_str()?;
    match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(v6) => v6.parse::<Ipv6Addr>().ok().map(IpAddr::V6),
        None => host.parse::<Ipv4Addr>().ok().map(IpAddr::V4),
    }
}

/// The outbound policy: allowed hosts and whether private addresses may be reached.
#[derive(Debug, Clone, Default)]
pub struct Outbound {
    /// Authorities of the spec URLs (and their `baseUrlEnv` values).
    declared: BTreeSet<AllowedHost>,
    /// `BOARDSMITH_OUTBOUND_ALLOW`: allowed, and allowed to be private.
    listed: BTreeSet<AllowedHost>,
    /// `BOARDSMITH_OUTBOUND_ALLOW_PRIVATE`.
    allow_private: bool,
}

impl Outbound {
    /// A policy allowing the `listed` hosts (also on private addresses) and, with
    /// `allow_private`, private addresses for every allowed host.
    pub fn new(listed: impl IntoIterator<Item = AllowedHost>, allow_private: bool) -> Self {
        Self { declared: BTreeSet::new(), listed: listed.into_iter().collect(), allow_private }
    }

    /// Allows the authority of `url` (a spec's URL, or a `baseUrlEnv` value).
    pub fn declare(&mut self, url: &Url) {
        if let Some(h) = AllowedHost::of_url(url) {
            self.declared.insert(h);
        }
    }

    /// Checks a URL before it is requested (also each redirect hop): scheme, allowed host and,
    /// for an IP literal, its address. Names are checked again when they resolve ([`Resolver`]).
    pub fn check(&self, url: &Url, redirect: bool) -> Result<(), Refused> {
        let shown = || format!("{}://{}", url.scheme(), url.host_str().unwrap_or_default());
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Refused::Scheme { url: shown() });
        }
        let Some(host) = host_key(url) else {
            return Err(Refused::Scheme { url: shown() });
        };
        let port = url.port_or_known_default();
        let listed = self.listed.iter().any(|h| h.matches(&host, port));
        if !listed && !self.declared.iter().any(|h| h.matches(&host, port)) {
            let authority = AllowedHost { host, port }.to_string();
            return Err(Refused::Host { authority, redirect });
        }
        let Some(ip) = host_ip(url) else { return Ok(()) };
        if listed || self.allow_private {
            return Ok(());
        }
        match non_public(ip) {
            Some(kind) => Err(Refused::Address { host: ip.to_string(), addr: ip, kind }),
            None => Ok(()),
        }
    }

    /// Whether a name may resolve to a non-public address: it is listed, or private addresses
    /// are allowed for all.
    fn private_allowed(&self, name: &str) -> bool {
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        self.allow_private || self.listed.iter().any(|h| h.host == name)
    }

    /// The redirect policy: at most 5 hops, each one [`Outbound::check`]ed.
    pub fn redirect_policy(self: &Arc<Self>) -> reqwest::redirect::Policy {
        let me = Arc::clone(self);
        reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() >= 5 {
                return attempt.error("too many redirects (more than 5)");
            }
            match me.check(attempt.url(), true) {
                Ok(()) => attempt.follow(),
                Err(refused) => attempt.error(refused),
            }
        })
    }
}

/// How names become addresses (the system resolver, or a fixed table in tests).
pub type Lookup =
    Arc<dyn Fn(String) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>> + Send + Sync>;

/// The system resolver (`getaddrinfo` on tokio's blocking pool).
pub fn system_lookup() -> Lookup {
    Arc::new(|name: String| {
        Box::pin(async move {
            let addrs = tokio::net::lookup_host((name.as_str(), 0)).await?;
            Ok(addrs.map(|a| a.ip()).collect())
        })
    })
}

/// The client's DNS resolver: drops every non-public address a name resolves to (unless the
/// policy allows it for that name) and refuses the name if none is left. The connection is
/// made to exactly the addresses returned here, so a rebinding DNS server cannot swap in a
/// private address after the check.
pub struct Resolver {
    outbound: Arc<Outbound>,
    lookup: Lookup,
}

impl Resolver {
    /// A resolver enforcing `outbound` over `lookup`.
    pub fn new(outbound: Arc<Outbound>, lookup: Lookup) -> Self {
        Self { outbound, lookup }
    }

    /// Resolves and filters one name.
    #[base::boxed]
    pub async fn resolve_name(&self, name: &str) -> Result<Vec<IpAddr>, ResolveError> {
        let addrs = (self.lookup)(name.to_owned()).await.map_err(ResolveError::Lookup)?;
        if self.outbound.private_allowed(name) {
            return Ok(addrs);
        }
        let mut refused = None;
        let public: Vec<IpAddr> = addrs
            .into_iter()
            .filter(|ip| match non_public(*ip) {
                Some(kind) => {
                    refused.get_or_insert((*ip, kind));
                    false
                }
                None => true,
            })
            .collect();
        match (public.is_empty(), refused) {
            (true, Some((addr, kind))) => {
                Err(ResolveError::Refused(Refused::Address { host: name.to_owned(), addr, kind }))
            }
            _ => Ok(public),
        }
    }
}

/// A failed resolution.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// Every address was refused by the policy.
    #[error(transparent)]
    Refused(Refused),
    /// The lookup itself failed.
    #[error(transparent)]
    Lookup(std::io::Error),
}

/// A name that did not resolve: the provider cannot be reached from here, and asking again at
/// once gets the same answer, so the SDK does not retry it.
#[derive(Debug, thiserror::Error)]
#[error("cannot resolve {host}: {source}")]
pub struct NameNotResolved {
    /// The name looked up.
    pub host: String,
    /// What the resolver said.
    pub source: std::io::Error,
}

impl Resolve for Resolver {
    fn resolve(&self, name: Name) -> Resolving {
        let me = Self { outbound: Arc::clone(&self.outbound), lookup: Arc::clone(&self.lookup) };
        Box::pin(async move {
            match me.resolve_name(name.as_str()).await {
                Ok(ips) => {
                    let addrs: Addrs = Box::new(ips.into_iter().map(|ip| SocketAddr::new(ip, 0)));
                    Ok(addrs)
                }
                Err(ResolveError::Refused(r)) => Err(r.into()),
                Err(ResolveError::Lookup(e)) => {
                    Err(NameNotResolved { host: name.as_str().to_owned(), source: e }.into())
                }
            }
        })
    }
}

/// What kind of non-public address `ip` is, or `None` for a public (globally routable) one.
pub fn non_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => non_public_v4(v4),
        IpAddr::V6(v6) => non_public_v6(v6),
    }
}

fn non_public_v4(ip: Ipv4Addr) -> Option<&'static str> {
    Some(match ip.octets() {
        [0, ..] => "unspecified",
        [127, ..] => "loopback",
        [10, ..] | [192, 168, ..] => "private",
        [172, b, ..] if (16..=31).contains(&b) => "private",
        [169, 254, ..] => "link-local (cloud metadata)",
        [100, b, ..] if (64..=127).contains(&b) => "shared (CGNAT)",
        [192, 0, 0, _] => "reserved (IETF protocol)",
        [192, 0, 2, _] | [198, 51, 100, _] | [203, 0, 113, _] => "documentation",
        [198, 18 | 19, ..] => "benchmarking",
        [a, ..] if a >= 224 => "multicast or reserved",
        _ => return None,
    })
}

fn non_public_v6(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return non_public_v4(v4);
    }
    let s = ip.segments();
    let embedded = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    match s {
        [0, 0, 0, 0, 0, 0, 0, 0] => Some("unspecified"),
        [0, 0, 0, 0, 0, 0, 0, 1] => Some("loopback"),
        // IPv4-compatible (deprecated) `::a.b.c.d`: treated as the IPv4 address, and never public.
        [0, 0, 0, 0, 0, 0, hi, lo] => non_public_v4(embedded(hi, lo)).or(Some("reserved")),
        // IPv4-translated (SIIT, `::ffff:0:a.b.c.d`): the embedded IPv4 address decides.
        [0, 0, 0, 0, 0xffff, 0, hi, lo] => non_public_v4(embedded(hi, lo)),
        // NAT64 (64:ff9b::/96, 64:ff9b:1::/48): the embedded IPv4 address decides.
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => non_public_v4(embedded(hi, lo)),
        [0x64, 0xff9b, 1, ..] => Some("private (local NAT64)"),
        // 6to4 2002::/16 embeds the IPv4 address in the next 32 bits.
        [0x2002, hi, lo, ..] => non_public_v4(embedded(hi, lo)),
        [0x2001, 0, ..] => Some("Teredo"),
        [0x2001, 0xdb8, ..] => Some("documentation"),
        [0x100, 0, 0, 0, ..] => Some("discard-only"),
        [a, ..] if a & 0xffc0 == 0xfe80 => Some("link-local"),
        [a, ..] if a & 0xffc0 == 0xfec0 => Some("site-local"),
        [a, ..] if a & 0xfe00 == 0xfc00 => Some("private (unique local)"),
        [a, ..] if a & 0xff00 == 0xff00 => Some("multicast"),
        _ => None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn kind(s: &str) -> Option<&'static str> {
        non_public(s.parse().unwrap())
    }

    #[test]
    fn classifies_addresses() {
        for (ip, k) in [
            ("127.0.0.1", "loopback"),
            ("127.255.1.2", "loopback"),
            ("0.0.0.0", "unspecified"),
            ("10.0.0.1", "private"),
            ("172.16.0.1", "private"),
            ("172.31.255.255", "private"),
            ("192.168.1.1", "private"),
            ("169.254.169.254", "link-local (cloud metadata)"),
            ("100.64.0.1", "shared (CGNAT)"),
            ("100.127.255.255", "shared (CGNAT)"),
            ("255.255.255.255", "multicast or reserved"),
            ("224.0.0.1", "multicast or reserved"),
            ("::", "unspecified"),
            ("::1", "loopback"),
            ("fe80::1", "link-local"),
            ("fc00::1", "private (unique local)"),
            ("fd12:3456::1", "private (unique local)"),
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:169.254.169.254", "link-local (cloud metadata)"),
            ("::ffff:10.1.2.3", "private"),
            ("::127.0.0.1", "loopback"),
            ("::ffff:0:127.0.0.1", "loopback"),
            ("64:ff9b::a9fe:a9fe", "link-local (cloud metadata)"),
            ("2002:7f00:1::", "loopback"),
            ("2001:db8::1", "documentation"),
            ("ff02::1", "multicast"),
        ] {
            assert_eq!(kind(ip), Some(k), "{ip}");
        }
        for ip in ["1.1.1.1", "8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700::1111"] {
            assert_eq!(kind(ip), None, "{ip}");
        }
    }

    #[test]
    fn parses_allow_entries() {
        let h = |s: &str| s.parse::<AllowedHost>().unwrap().to_string();
        assert_eq!(h("API.Example.com"), "api.example.com");
        assert_eq!(h("127.0.0.1:8080"), "127.0.0.1:8080");
        assert_eq!(h("[::1]:9000"), "[::1]:9000");
        assert_eq!(h("::1"), "[::1]");
        assert_eq!(h("https://mirror.local/x"), "mirror.local:443");
        assert_eq!(h("2130706433"), "127.0.0.1");
        for bad in ["", "a b", "host:port", "host/path", "user@host"] {
            assert!(bad.parse::<AllowedHost>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn check_allows_declared_hosts_and_refuses_others() {
        let mut o = Outbound::new([], false);
        o.declare(&url("https://api.binance.com/api/v3/klines"));
        assert_eq!(o.check(&url("https://API.binance.com/x?y=1"), false), Ok(()));
        // Same host, other port or scheme-default port: not declared.
        let e = o.check(&url("https://api.binance.com:8443/x"), false).unwrap_err();
        assert_eq!(e, Refused::Host { authority: "api.binance.com:8443".into(), redirect: false });
        assert!(e.to_string().contains("add `api.binance.com:8443` to BOARDSMITH_OUTBOUND_ALLOW"));
        let e = o.check(&url("http://evil.example/"), true).unwrap_err();
        assert!(e.to_string().starts_with("redirected to `evil.example:80` is not"), "{e}");
        assert!(matches!(o.check(&url("file:///etc/passwd"), false), Err(Refused::Scheme { .. })));
    }

    #[test]
    fn ip_literals_need_listing_even_when_declared() {
        let mut o = Outbound::new([], false);
        for u in [
            "http://127.0.0.1/",
            "http://2130706433/",
            "http://0x7f000001/",
            "http://0177.0.0.1/",
            "http://0/",
            "http://[::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://169.254.169.254/latest/meta-data/",
            "http://10.0.0.1/",
        ] {
            o.declare(&url(u));
            let e = o.check(&url(u), false).unwrap_err();
            assert!(matches!(e, Refused::Address { .. }), "{u}: {e}");
            assert!(e.to_string().contains("set BOARDSMITH_OUTBOUND_ALLOW_PRIVATE=1"), "{e}");
        }
        o.declare(&url("http://1.1.1.1/"));
        assert_eq!(o.check(&url("http://1.1.1.1/"), false), Ok(()));

        let listed = Outbound::new(["127.0.0.1:9000".parse().unwrap()], false);
        assert_eq!(listed.check(&url("http://127.0.0.1:9000/x"), false), Ok(()));
        assert!(listed.check(&url("http://127.0.0.1:9001/x"), false).is_err());
        let mut all = Outbound::new([], true);
        all.declare(&url("http://10.0.0.1/"));
        assert_eq!(all.check(&url("http://10.0.0.1/"), false), Ok(()));
    }

    fn table(entries: &[(&str, &[&str])]) -> Lookup {
        let map: std::collections::HashMap<String, Vec<IpAddr>> = entries
            .iter()
            .map(|(n, ips)| ((*n).to_owned(), ips.iter().map(|i| i.parse().unwrap()).collect()))
            .collect();
        Arc::new(move |name: String| {
            let found = map.get(&name).cloned();
            Box::pin(async move {
                found.ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no such"))
            })
        })
    }

    #[tokio::test]
    async fn resolver_drops_private_addresses_and_refuses_names_left_with_none() {
        let lookup = table(&[
            ("rebind.example", &["127.0.0.1"]),
            ("meta.example", &["169.254.169.254", "::ffff:169.254.169.254"]),
            ("mixed.example", &["10.0.0.7", "93.184.216.34"]),
            ("good.example", &["93.184.216.34", "2606:2800:220:1::1"]),
            ("mirror.lan", &["192.168.1.20"]),
        ]);
        let o = Arc::new(Outbound::new(["mirror.lan".parse().unwrap()], false));
        let r = Resolver::new(o, lookup.clone());
        let err = r.resolve_name("rebind.example").await.unwrap_err();
        let ResolveError::Refused(refused) = err else { panic!("{err:?}") };
        assert_eq!(
            refused.to_string(),
            "`rebind.example` resolves to 127.0.0.1, a loopback address, which data sources may \
             not reach; if this is intended, the user can add `rebind.example` to \
             BOARDSMITH_OUTBOUND_ALLOW (or set BOARDSMITH_OUTBOUND_ALLOW_PRIVATE=1) and restart"
        );
        assert!(matches!(r.resolve_name("meta.example").await, Err(ResolveError::Refused(_))));
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(r.resolve_name("mixed.example").await.unwrap(), [ip("93.184.216.34")]);
        assert_eq!(r.resolve_name("good.example").await.unwrap().len(), 2);
        // A listed host may be private.
        assert_eq!(r.resolve_name("mirror.lan").await.unwrap(), [ip("192.168.1.20")]);
        assert!(matches!(r.resolve_name("nx.example").await, Err(ResolveError::Lookup(_))));

        let all = Resolver::new(Arc::new(Outbound::new([], true)), lookup);
        assert_eq!(all.resolve_name("rebind.example").await.unwrap(), [ip("127.0.0.1")]);
    }

    #[tokio::test]
    async fn system_resolver_refuses_localhost() {
        let r = Resolver::new(Arc::new(Outbound::new([], false)), system_lookup());
        let err = r.resolve_name("localhost").await.unwrap_err();
        assert!(matches!(err, ResolveError::Refused(Refused::Address { .. })), "{err:?}");
    }
}
