//! Builds the browser app (`web/` at the workspace root) into `OUT_DIR/web`, which this crate's
//! `src/web.rs` embeds in the binary, so `cargo run --release` alone brings up the whole UI.
//!
//! Steps: `npm ci --ignore-scripts` in `web/` when `node_modules` is missing or older than the
//! lockfile, then `node web/build.mjs OUT_DIR/web` (esbuild bundle plus precompressed copies).
//! Needs Node.js ≥ 18 and npm on PATH and, for the first `npm ci`, the npm registry.
//! `BOARDSMITH_SKIP_WEB=1` skips the build and embeds a page that says so (for machines without
//! Node).

use std::path::Path;
use std::process::{Command, Stdio};
use std::{env, fs};

fn main() {
    for path in [
        "../../web/src",
        "../../web/index.html",
        "../../web/docs.html",
        "../../web/build.mjs",
        "../../web/package.json",
        "../../web/package-lock.json",
    ] {
        println!("cargo:rerun-if-changed={path}");
    }
    println!("cargo:rerun-if-env-changed=BOARDSMITH_SKIP_WEB");
    let out_dir = env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let out = Path::new(&out_dir).join("web");
    // Read when the script runs, not baked in when it is compiled: checkouts that share one
    // target dir (scripts/test's default) share this script's binary too, and each must bundle
    // its own web/.
    let manifest_dir = env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let web = Path::new(&manifest_dir).join("../../web");

    if env::var_os("BOARDSMITH_SKIP_WEB").is_some_and(|v| v != "0") {
        fs::create_dir_all(&out).expect("creating OUT_DIR/web");
        fs::write(
            out.join("index.html"),
            "<!doctype html><title>Boardsmith</title><p>This build skipped the web app \
             (BOARDSMITH_SKIP_WEB). The API is at <code>/api</code>.</p>",
        )
        .expect("writing the placeholder page");
        return;
    }

    let lock = web.join("package-lock.json");
    let installed = web.join("node_modules/.package-lock.json");
    if is_older(&installed, &lock) {
        // No dependency's install script runs (one would report telemetry): none is needed,
        // esbuild's binary comes with its platform package (`@esbuild/linux-x64` and the like).
        run(
            Command::new("npm")
                .args(["ci", "--ignore-scripts", "--no-audit", "--no-fund"])
                .current_dir(&web),
            "npm ci",
        );
    }
    run(Command::new("node").arg(web.join("build.mjs")).arg(&out), "node web/build.mjs");
}

/// True when `a` is missing or was modified before `b`.
fn is_older(a: &Path, b: &Path) -> bool {
    let modified = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).ok();
    match (modified(a), modified(b)) {
        (Some(a), Some(b)) => a < b,
        _ => true,
    }
}

fn run(cmd: &mut Command, what: &str) {
    // stdout → stderr: a build script's stdout is read by cargo as instructions.
    let status = cmd.stdout(Stdio::from(std::io::stderr())).status().unwrap_or_else(|e| {
        panic!(
            "building the web app: could not start `{what}` ({e}). Install Node.js 18+ and npm, \
             or set BOARDSMITH_SKIP_WEB=1 to build the server without its web app."
        )
    });
    assert!(
        status.success(),
        "building the web app: `{what}` failed ({status}); see its output above"
    );
}
