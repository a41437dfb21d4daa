//! What cargo cannot check about the workspace's layering (rust-analyzer's tidy tests are the
//! model). Cargo already refuses an import of a crate that is not a dependency; this test keeps
//! the dependencies themselves to the layers ARCHITECTURE.md draws, keeps the files of each
//! crate free of circles, and keeps dashboard writes in `dashboards`. A violation names the
//! file (and line) and the rule, so the fix is where the message points.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// In a row of [`LAYERS`]: every crate in the rows above it.
const BELOW: &str = "*";

/// Which of our crates each crate may depend on. Lower layers first; the binary (the root
/// package) may use them all.
const LAYERS: &[(&str, &[&str])] = &[
    ("base", &[]),
    // Headless Chromium over the DevTools protocol: a page in, PNG or PDF bytes out.
    ("render", &["base"]),
    ("dashboard", &["base"]),
    ("sandbox", &["base"]),
    // The provider layer knows nothing of agents, dashboards or HTTP.
    ("llm", &["base"]),
    ("sdk", &["base", "sandbox"]),
    ("store", &["base", "dashboard"]),
    // Uploaded images over the store's rows; no HTTP, chats or models.
    ("uploads", &["base", "store"]),
    ("live", &["base", "dashboard", "sandbox"]),
    ("dashboards", &["base", "dashboard", "live", "store"]),
    // Alert rules judged on scheduled runs; states and notifications in the store.
    ("alerting", &["base", "dashboard", "dashboards", "live", "sandbox", "sdk", "store"]),
    // The runtime of every agent; chat memory on a shared store; nothing of dashboards.
    ("agent", &["base", "llm", "store", "uploads"]),
    ("knowledge", &["agent", "base", "llm", "sdk", "store"]),
    ("workflow", &["agent", "base", "knowledge", "llm", "sandbox", "store"]),
    // The server token, API keys (with `sdk`'s token bucket) and the usage ledger.
    ("access", &["base", "llm", "sdk", "store"]),
    ("admin", &["agent", "base", "llm", "store"]),
    // Dashboards as PNG and PDF, and scheduled reports sent to alert channels.
    ("reports", &["access", "alerting", "base", "dashboards", "render", "store"]),
    ("dashboard-agent", &["agent", "base", "dashboard", "dashboards", "live", "sandbox", "store"]),
    // The dashboard tools for MCP clients: not the agent runtime.
    (
        "mcp",
        &["access", "base", "dashboard", "dashboard-agent", "dashboards", "live", "sdk", "store"],
    ),
    // The composition of the services (knows nothing of HTTP), then the HTTP edge: each may
    // use every layer listed before it.
    ("app", &[BELOW]),
    ("server", &[BELOW]),
];

/// Writes to the store or the live layer's published state: only `dashboards` (and the owning
/// crates themselves) may call them.
const WRITES: &[&str] = &[
    "store.create(",
    "store.save(",
    "store.revert(",
    "store.delete(",
    "store.restore(",
    "store.duplicate(",
    "store.purge(",
    ".version_saved(",
    ".record_run(",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a line, without its `//` comment.
fn code(line: &str) -> &str {
    line.split("//").next().unwrap_or_default()
}

/// Our crates a manifest depends on (`[dependencies]` only: tests may use anything).
fn internal_deps(manifest: &str, ours: &BTreeSet<String>) -> BTreeSet<String> {
    let mut in_deps = false;
    let mut deps = BTreeSet::new();
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_deps = line == "[dependencies]";
        } else if in_deps {
            let name = line.split(['.', '=', ' ']).next().unwrap_or_default();
            if ours.contains(name) {
                deps.insert(name.to_owned());
            }
        }
    }
    deps
}

/// Every crate depending on one of ours that its layer does not allow.
fn layer_problems(crates: &Path) -> Vec<String> {
    let mut manifests = BTreeMap::new();
    for entry in std::fs::read_dir(crates).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        manifests.insert(name, std::fs::read_to_string(dir.join("Cargo.toml")).unwrap());
    }
    let ours: BTreeSet<String> = manifests.keys().cloned().collect();
    let mut problems = Vec::new();
    for (name, manifest) in &manifests {
        let Some(row) = LAYERS.iter().position(|(n, _)| n == name) else {
            problems.push(format!("crates/{name}: not in tidy's LAYERS (add it where it stands)"));
            continue;
        };
        let allowed: Vec<&str> = match LAYERS[row].1 {
            [BELOW] => LAYERS[..row].iter().map(|(n, _)| *n).collect(),
            listed => listed.to_vec(),
        };
        for dep in internal_deps(manifest, &ours) {
            if !allowed.contains(&dep.as_str()) {
                problems.push(format!(
                    "crates/{name}/Cargo.toml: `{name}` must not depend on `{dep}` (allowed: {allowed:?})"
                ));
            }
        }
    }
    problems
}

/// A file's module path within its crate: `src/intl/data.rs` → `["intl", "data"]`; `lib.rs`
/// and `mod.rs` are their directory's module.
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> =
        rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("lib" | "mod" | "main")) {
        parts.pop();
    }
    parts
}

/// The module files a line names through `crate::`, `super::` or `self::` paths (the longest
/// prefix that is a file of `modules`), braces of a `use` included.
fn named_modules(
    line: &str,
    here: &[String],
    modules: &BTreeSet<Vec<String>>,
    out: &mut BTreeSet<Vec<String>>,
) {
    let resolve = |base: Vec<String>, segments: &[&str], out: &mut BTreeSet<Vec<String>>| {
        let mut path = base.clone();
        let mut target = base;
        for seg in segments {
            path.push((*seg).to_owned());
            if modules.contains(&path) {
                target = path.clone();
            } else {
                break;
            }
        }
        out.insert(target);
    };
    let bytes = line.as_bytes();
    for head in ["crate::", "super::", "self::"] {
        for (at, _) in line.match_indices(head) {
            if at > 0
                && (bytes[at - 1].is_ascii_alphanumeric()
                    || matches!(bytes[at - 1], b'_' | b'$' | b':'))
            {
                continue;
            }
            let mut base: Vec<String> = match head {
                "crate::" => Vec::new(),
                "self::" => here.to_vec(),
                _ => here[..here.len().saturating_sub(1)].to_vec(),
            };
            let rest = &line[at + head.len()..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            let mut segments: Vec<&str> =
                rest[..end].split("::").filter(|s| !s.is_empty()).collect();
            while segments.first() == Some(&"super") {
                base.pop();
                segments.remove(0);
            }
            resolve(base.clone(), &segments, out);
            // `use crate::{a::b, c}`: each branch.
            if rest[end..].starts_with('{') {
                let inner = &rest[end + 1..rest[end..].find('}').map_or(rest.len(), |i| end + i)];
                let prefix = {
                    let mut p = base.clone();
                    p.extend(segments.iter().map(|s| (*s).to_owned()));
                    p
                };
                for branch in inner.split(',') {
                    let segs: Vec<&str> =
                        branch.trim().split("::").filter(|s| !s.is_empty()).collect();
                    resolve(prefix.clone(), &segs, out);
                }
            }
        }
    }
}

/// Circles among the files of the crate whose sources are under `src`: a file naming another
/// file's module is an arrow to it, except an arrow to its own ancestors (a child uses its
/// parent's items; the parent declares the child). Each circle as its sorted file list.
fn circles(src: &Path) -> Vec<Vec<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeMap<Vec<String>, &PathBuf> =
        files.iter().map(|f| (module_path(src, f), f)).collect();
    let names: BTreeSet<Vec<String>> = modules.keys().cloned().collect();
    let mut arrows: BTreeMap<&Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (here, file) in &modules {
        let text = std::fs::read_to_string(file).unwrap();
        let mut named = BTreeSet::new();
        for line in text.lines() {
            named_modules(code(line), here, &names, &mut named);
        }
        named.retain(|to| to != here && !here.starts_with(to));
        arrows.insert(here, named);
    }
    // Strongly connected components (Tarjan), iterating to stay off the stack's limits.
    let nodes: Vec<&Vec<String>> = arrows.keys().copied().collect();
    let index_of: BTreeMap<&Vec<String>, usize> =
        nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let next: Vec<Vec<usize>> = nodes
        .iter()
        .map(|n| arrows[n].iter().filter_map(|to| index_of.get(to).copied()).collect())
        .collect();
    let n = nodes.len();
    let (mut index, mut low, mut on_stack) = (vec![usize::MAX; n], vec![0; n], vec![false; n]);
    let (mut stack, mut found, mut counter) = (Vec::new(), Vec::new(), 0);
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut work = vec![(root, 0usize)];
        while let Some((v, i)) = work.pop() {
            if i == 0 {
                index[v] = counter;
                low[v] = counter;
                counter += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if let Some(&w) = next[v].get(i) {
                work.push((v, i + 1));
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                loop {
                    let w = stack.pop().unwrap();
                    on_stack[w] = false;
                    component
                        .push(modules[nodes[w]].strip_prefix(src).unwrap().display().to_string());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    found.push(component);
                }
            }
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
        }
    }
    found
}

/// Dashboard writes outside `dashboards`, and HTTP handlers reaching past the services, in the
/// crate `name` whose sources are under `src`.
fn write_problems(name: &str, src: &Path, shown_from: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut problems = Vec::new();
    let owner = matches!(name, "dashboards" | "store" | "live");
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let shown = file.strip_prefix(shown_from).unwrap().display().to_string();
        // The HTTP edge calls services; only the WebSocket uses live's subscription API.
        let edge = name == "server" && !file.strip_prefix(src).unwrap().starts_with("ws");
        for (n, line) in text.lines().enumerate() {
            let code = code(line);
            if edge && (code.contains("app.live") || code.contains("app.store")) {
                problems.push(format!(
                    "{shown}:{}: a handler reaches past the services: call `app.dashboards`",
                    n + 1
                ));
            }
            if !owner && let Some(w) = WRITES.iter().find(|w| code.contains(*w)) {
                problems.push(format!(
                    "{shown}:{}: `{w}` outside `dashboards`: dashboard writes go through `Dashboards`",
                    n + 1
                ));
            }
        }
    }
    problems
}

/// Public `async fn`s of a crate that another crate would compile again: every one whose
/// signature has no type parameter must be `#[base::boxed]` (a generic one is compiled by its
/// callers whatever we do). See ARCHITECTURE.md, "Async at crate boundaries".
fn unboxed_async(src: &Path, shown_from: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut problems = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (n, line) in lines.iter().enumerate() {
            let Some(rest) = line.trim_start().strip_prefix("pub async fn ") else { continue };
            // Up to the body's opening brace (the line holding it included).
            let end =
                lines[n..].iter().position(|l| l.contains('{')).map_or(lines.len(), |e| n + e);
            let signature: String = lines[n..=end.min(lines.len() - 1)].concat();
            let params = signature.split_once('(').map_or("", |(_, p)| p);
            let type_params = rest
                .split_once('<')
                .filter(|(name, _)| !name.contains('('))
                .is_some_and(|(_, g)| g.split(['>', ',']).any(|p| !p.trim().starts_with('\'')));
            if type_params || params.split("->").next().unwrap_or_default().contains("impl ") {
                continue;
            }
            let boxed = lines[..n]
                .iter()
                .rev()
                .take_while(|l| {
                    l.trim_start().starts_with("#[") || l.trim_start().starts_with("///")
                })
                .any(|l| l.contains("#[base::boxed"));
            if !boxed {
                let at = file.strip_prefix(shown_from).unwrap_or(&file).display();
                problems.push(format!("{at}:{}: `pub async fn` without #[base::boxed]", n + 1));
            }
        }
    }
    problems
}

/// Every source tree of the workspace: each crate's `src` with its name, and the binary's.
fn source_trees(root: &Path) -> Vec<(String, PathBuf)> {
    let mut trees = vec![("boardsmith".to_owned(), root.join("src"))];
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        trees.push((dir.file_name().unwrap().to_string_lossy().into_owned(), dir.join("src")));
    }
    trees.sort();
    trees
}

#[test]
fn crates_depend_only_on_the_layers_below_them() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let crates = root.join("crates");
    assert!(std::fs::read_dir(&crates).unwrap().count() >= 15, "read the workspace");
    let problems = layer_problems(&crates);
    assert!(problems.is_empty(), "layering broken:\n{}", problems.join("\n"));
}

#[test]
fn no_crate_has_a_circle_between_its_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut problems = Vec::new();
    for (name, src) in source_trees(root) {
        for circle in circles(&src) {
            problems.push(format!("{name}: {}", circle.join(" ↔ ")));
        }
    }
    assert!(
        problems.is_empty(),
        "files that import each other in a circle:\n{}",
        problems.join("\n")
    );
}

#[test]
fn only_dashboards_writes_dashboards_and_handlers_call_services() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut problems = Vec::new();
    for (name, src) in source_trees(root) {
        problems.extend(write_problems(&name, &src, root));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn public_async_fns_are_boxed_at_crate_boundaries() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut problems = Vec::new();
    for (name, src) in source_trees(root) {
        if name != "boardsmith" {
            problems.extend(unboxed_async(&src, root));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_checkers_see_what_they_must_refuse() {
    let dir = tempfile::tempdir().unwrap();
    let crates = dir.path().join("crates");
    for (name, deps) in [
        ("llm", "base.workspace = true\nagent = { path = \"../agent\" }"),
        ("agent", ""),
        ("base", ""),
        ("nowhere", ""),
        // Every layer below it: allowed.
        ("server", "agent.workspace = true\nllm.workspace = true"),
    ] {
        std::fs::create_dir_all(crates.join(name)).unwrap();
        std::fs::write(
            crates.join(name).join("Cargo.toml"),
            format!("[package]\nname = \"{name}\"\n\n[dependencies]\n{deps}\n\n[dev-dependencies]\nagent.workspace = true\n"),
        )
        .unwrap();
    }
    assert_eq!(
        layer_problems(&crates),
        [
            "crates/llm/Cargo.toml: `llm` must not depend on `agent` (allowed: [\"base\"])",
            "crates/nowhere: not in tidy's LAYERS (add it where it stands)",
        ]
    );

    // a.rs ↔ b/c.rs is a circle; b/c.rs → b (its parent) and lib → a are not.
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("b")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod a;\nmod b;\nuse a::X;\n").unwrap();
    std::fs::write(src.join("a.rs"), "use crate::b::{c::Y, Z};\n// crate::d in a comment\n")
        .unwrap();
    std::fs::write(src.join("b.rs"), "pub mod c;\npub struct Z;\n").unwrap();
    std::fs::write(src.join("b/c.rs"), "use super::Z;\nfn f() { crate::a::g(); }\n").unwrap();
    std::fs::write(src.join("d.rs"), "use super::super::a;\n").unwrap();
    assert_eq!(circles(&src), [vec!["a.rs".to_owned(), "b/c.rs".to_owned()]]);
    std::fs::write(src.join("b/c.rs"), "use super::Z;\n").unwrap();
    assert!(circles(&src).is_empty());

    // Writes outside `dashboards`; handlers past the services, but not the WebSocket.
    std::fs::create_dir_all(src.join("ws")).unwrap();
    std::fs::write(src.join("h.rs"), "fn f() { app.store.save(&id, 1, s, \"n\"); }\n").unwrap();
    std::fs::write(src.join("ws/mod.rs"), "let v = app.live.viewer(a, o);\n").unwrap();
    let mut found = write_problems("server", &src, dir.path());
    found.sort();
    assert_eq!(
        found,
        [
            "src/h.rs:1: `store.save(` outside `dashboards`: dashboard writes go through `Dashboards`",
            "src/h.rs:1: a handler reaches past the services: call `app.dashboards`",
        ]
    );
    assert!(write_problems("dashboards", &src, dir.path()).iter().all(|p| !p.contains("save")));

    // An async fn another crate awaits must be boxed, unless its callers compile it anyway.
    let boxing = dir.path().join("boxing");
    std::fs::create_dir_all(&boxing).unwrap();
    std::fs::write(
        boxing.join("lib.rs"),
        "pub async fn bare(x: &str) -> u8 { 1 }\n\
         /// Doc.\n#[base::boxed]\npub async fn boxed<'a>(x: &'a str) {}\n\
         pub async fn generic<T: Send>(x: T) {}\n\
         pub async fn takes(f: impl Future<Output = ()>) {}\n\
         pub(crate) async fn inner() {}\n",
    )
    .unwrap();
    assert_eq!(
        unboxed_async(&boxing, dir.path()),
        ["boxing/lib.rs:1: `pub async fn` without #[base::boxed]"]
    );
}
