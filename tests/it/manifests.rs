//! The workspace's `rust-version` is true: no crate we build from a path (our crates, the
//! vendored Boa patch, any path dependency of theirs) declares a higher one. Only one toolchain is
//! installed where the tests run, so building with the declared minimum cannot check it; reading
//! the manifests can.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use toml::Value;

/// A `rust-version`: `major[.minor[.patch]]`, the missing parts 0 (as Cargo reads it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct RustVersion(u64, u64, u64);

impl RustVersion {
    fn parse(text: &str) -> Result<Self, String> {
        let parts: Vec<&str> = text.trim().split('.').collect();
        if parts.is_empty() || parts.len() > 3 {
            return Err(format!("{text:?}: not major[.minor[.patch]]"));
        }
        let mut numbers = [0u64; 3];
        for (n, part) in numbers.iter_mut().zip(&parts) {
            // Digits only: `parse` would take a sign.
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!("{text:?}: {part:?} is not a number"));
            }
            *n = part.parse().map_err(|e| format!("{text:?}: {part:?}: {e}"))?;
        }
        Ok(Self(numbers[0], numbers[1], numbers[2]))
    }
}

impl fmt::Display for RustVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

fn read_manifest(dir: &Path) -> Value {
    let path = dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    toml::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

/// The directories of the crates `manifest` (in `dir`) names by path: workspace members
/// (`dir/*` globs expanded), and the `path` of every dependency, workspace dependency and patch.
fn path_crates(dir: &Path, manifest: &Value) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut deps = |table: Option<&Value>| {
        for spec in table.and_then(Value::as_table).into_iter().flat_map(|t| t.values()) {
            if let Some(path) = spec.get("path").and_then(Value::as_str) {
                found.push(dir.join(path));
            }
        }
    };
    for key in ["dependencies", "dev-dependencies", "build-dependencies"] {
        deps(manifest.get(key));
        for target in manifest.get("target").and_then(Value::as_table).into_iter().flatten() {
            deps(target.1.get(key));
        }
    }
    let workspace = manifest.get("workspace");
    deps(workspace.and_then(|w| w.get("dependencies")));
    for registry in manifest.get("patch").and_then(Value::as_table).into_iter().flatten() {
        deps(Some(registry.1));
    }
    let members = workspace.and_then(|w| w.get("members")).and_then(Value::as_array);
    for member in members.into_iter().flatten().filter_map(Value::as_str) {
        match member.strip_suffix("/*") {
            Some(parent) => {
                let entries = std::fs::read_dir(dir.join(parent)).unwrap();
                for entry in entries.map(Result::unwrap) {
                    if entry.path().join("Cargo.toml").is_file() {
                        found.push(entry.path());
                    }
                }
            }
            None => found.push(dir.join(member)),
        }
    }
    found
}

/// The root's `[workspace.package] rust-version`, and every path crate's own (those that inherit
/// the workspace's are left out), by crate directory relative to `root`.
fn declared(root: &Path) -> (RustVersion, BTreeMap<String, RustVersion>) {
    let manifest = read_manifest(root);
    let workspace = manifest["workspace"]["package"]["rust-version"]
        .as_str()
        .expect("[workspace.package] rust-version is a string");
    let workspace = RustVersion::parse(workspace).unwrap();

    let root_dir = root.canonicalize().unwrap();
    let mut crates = BTreeMap::new();
    let mut seen = BTreeSet::new();
    let mut queue = path_crates(root, &manifest);
    while let Some(dir) = queue.pop() {
        let dir = dir.canonicalize().unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        if !seen.insert(dir.clone()) {
            continue;
        }
        let manifest = read_manifest(&dir);
        // `rust-version.workspace = true` is a table: the workspace's own.
        if let Some(v) = manifest.get("package").and_then(|p| p.get("rust-version"))
            && let Some(text) = v.as_str()
        {
            let name = dir.strip_prefix(&root_dir).unwrap_or(&dir);
            let version = RustVersion::parse(text)
                .unwrap_or_else(|e| panic!("{}: rust-version {e}", dir.display()));
            crates.insert(name.display().to_string(), version);
        }
        queue.extend(path_crates(&dir, &manifest));
    }
    (workspace, crates)
}

/// The path crates under `root` that declare a higher `rust-version` than its workspace, as
/// "dir needs x.y.z"; and the workspace's.
fn above_the_workspace(root: &Path) -> (RustVersion, Vec<String>) {
    let (workspace, crates) = declared(root);
    let higher = crates
        .iter()
        .filter(|(_, v)| **v > workspace)
        .map(|(name, v)| format!("{name} needs {v}"))
        .collect();
    (workspace, higher)
}

#[test]
fn the_workspace_rust_version_is_at_least_every_path_crates() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (_, crates) = declared(root);
    // The vendored Boa declares its own: the check has something to compare.
    assert!(crates.keys().any(|k| k.starts_with("vendor/")), "no vendored crate found: {crates:?}");
    let (workspace, higher) = above_the_workspace(root);
    assert!(
        higher.is_empty(),
        "the workspace declares rust-version {workspace} (root Cargo.toml, \
         [workspace.package]), but {}: raise it to the highest",
        higher.join(", ")
    );
}

/// The check itself, on a workspace made for it: a member (through `crates/*`) and a patch that
/// declare more than the workspace are named; one that inherits and one that declares less are not.
#[test]
fn a_path_crate_above_the_workspace_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "Cargo.toml",
        "[package]\nname = \"root\"\nrust-version.workspace = true\n\
         [dependencies]\nlow = { path = \"low\" }\n\
         [workspace]\nmembers = [\"crates/*\"]\n\
         [workspace.package]\nrust-version = \"1.90\"\n\
         [patch.crates-io]\nengine = { path = \"vendor/engine\" }\n",
    );
    write("crates/a/Cargo.toml", "[package]\nname = \"a\"\nrust-version.workspace = true\n");
    write("crates/b/Cargo.toml", "[package]\nname = \"b\"\nrust-version = \"1.90.1\"\n");
    write("low/Cargo.toml", "[package]\nname = \"low\"\nrust-version = \"1.85\"\n");
    write(
        "vendor/engine/Cargo.toml",
        "[package]\nname = \"engine\"\nrust-version = \"1.91.0\"\n\
         [dependencies]\ninner = { path = \"../inner\" }\n",
    );
    write("vendor/inner/Cargo.toml", "[package]\nname = \"inner\"\nrust-version = \"1.100\"\n");
    let (workspace, mut higher) = above_the_workspace(dir.path());
    higher.sort();
    assert_eq!(workspace, RustVersion(1, 90, 0));
    assert_eq!(
        higher,
        ["crates/b needs 1.90.1", "vendor/engine needs 1.91.0", "vendor/inner needs 1.100.0"]
    );
}

#[test]
fn rust_versions_parse_and_order_by_number() {
    let v = |s: &str| RustVersion::parse(s).unwrap();
    assert_eq!(v("1.91"), RustVersion(1, 91, 0));
    assert_eq!(v("1.91.0"), v("1.91"));
    assert_eq!(v("2"), RustVersion(2, 0, 0));
    assert!(v("1.90") < v("1.91.0"));
    assert!(v("1.9") < v("1.10"), "numbers, not strings");
    assert!(v("1.91.1") > v("1.91"));
    for bad in ["", "1.x", "1..2", "1.2.3.4", "-1.2", "1.91-nightly"] {
        assert!(RustVersion::parse(bad).is_err(), "{bad:?}");
    }
}
