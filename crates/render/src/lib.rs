//! Pages to PNG and PDF in a headless Chromium driven over the DevTools protocol
//! (chromiumoxide). Owns finding the browser (`BOARDSMITH_CHROMIUM`, else the usual names on
//! `PATH`), one short-lived browser per render in a private profile directory, a bound on
//! renders at once, waiting until the page says it is ready, and the capture. Knows nothing of
//! dashboards, links or HTTP: the caller gives a URL and a readiness test.
//!
//! Chromium is optional: without it [`Renderer::status`] says why, and every render is
//! [`RenderError::Unavailable`]. A browser that crashes or hangs is a failed render (the
//! process is killed), never a failed server.

use std::path::{Path, PathBuf};
use std::time::Duration;

use chromiumoxide::browser::{Browser, BrowserConfig};
use chromiumoxide::cdp::browser_protocol::page::{CaptureScreenshotFormat, PrintToPdfParams};
use chromiumoxide::page::ScreenshotParams;
use futures::StreamExt as _;
use serde::Serialize;

/// The variable naming the Chromium (or Chrome) binary.
pub const CHROMIUM_VAR: &str = "BOARDSMITH_CHROMIUM";
/// Names tried on `PATH` when the variable is not set.
const CANDIDATES: &[&str] =
    &["chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"];

/// What a render makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// A full-page screenshot.
    Png,
    /// A printed document (A4 landscape, backgrounds kept).
    Pdf,
}

impl Format {
    /// Its media type.
    pub fn content_type(self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Pdf => "application/pdf",
        }
    }

    /// Its file extension.
    pub fn extension(self) -> &'static str {
        match self {
            Self::Png => "png",
            Self::Pdf => "pdf",
        }
    }
}

/// Settings.
#[derive(Debug, Clone)]
pub struct RenderConfig {
    /// The browser binary; `None`: look for one.
    pub chromium: Option<PathBuf>,
    /// Renders at once (each is a browser process of a few hundred MB).
    pub concurrency: usize,
    /// How long a render waits for a slot before it is refused as busy.
    pub queue_wait: Duration,
    /// The whole render, launch to bytes, at most.
    pub timeout: Duration,
    /// How long to wait for the page to say it is ready before capturing what it shows.
    pub ready_within: Duration,
    /// The window's width and height in CSS pixels.
    pub window: (u32, u32),
}

impl Default for RenderConfig {
    fn default() -> Self {
        Self {
            chromium: None,
            concurrency: 1,
            queue_wait: Duration::from_secs(60),
            timeout: Duration::from_secs(60),
            ready_within: Duration::from_secs(20),
            window: (1400, 900),
        }
    }
}

impl RenderConfig {
    /// Defaults with [`CHROMIUM_VAR`] applied.
    pub fn from_env() -> Self {
        Self {
            chromium: std::env::var_os(CHROMIUM_VAR).filter(|v| !v.is_empty()).map(PathBuf::from),
            ..Self::default()
        }
    }
}

/// Whether renders can run, as Settings shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RendererStatus {
    /// PNG and PDF can be made.
    pub available: bool,
    /// The browser in use.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub executable: Option<String>,
    /// Why not, and how to fix it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Why a render failed.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// No browser: the message says how to get one.
    #[error("{0}")]
    Unavailable(String),
    /// Every render slot stayed taken for `queue_wait`.
    #[error("other renders are running; try again in a minute")]
    Busy,
    /// The render took longer than its bound.
    #[error("the render did not finish within {} s", .0.as_secs())]
    Timeout(Duration),
    /// The browser failed (it did not start, crashed or refused).
    #[error("the browser failed: {0}")]
    Browser(String),
}

/// Renders pages; cheap to share behind an `Arc`.
pub struct Renderer {
    config: RenderConfig,
    executable: Result<PathBuf, String>,
    slots: tokio::sync::Semaphore,
}

impl std::fmt::Debug for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer").field("executable", &self.executable).finish_non_exhaustive()
    }
}

/// The browser `configured` names, or the first of [`CANDIDATES`] on `path`.
fn find_executable(
    configured: Option<&Path>,
    path: Option<&std::ffi::OsStr>,
) -> Result<PathBuf, String> {
    if let Some(p) = configured {
        return if p.is_file() {
            Ok(p.to_owned())
        } else {
            Err(format!("{CHROMIUM_VAR} names {}, which is not a file", p.display()))
        };
    }
    let dirs: Vec<PathBuf> = path.map(|p| std::env::split_paths(p).collect()).unwrap_or_default();
    CANDIDATES
        .iter()
        .flat_map(|name| dirs.iter().map(move |d| d.join(name)))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            format!(
                "PNG and PDF need Chromium, which is not installed: install it (Debian and \
                 Ubuntu: apt install chromium) or set {CHROMIUM_VAR} to a Chromium or Chrome binary"
            )
        })
}

impl Renderer {
    /// With the browser `config` names or one found on `PATH`.
    pub fn new(config: RenderConfig) -> Self {
        let executable =
            find_executable(config.chromium.as_deref(), std::env::var_os("PATH").as_deref());
        let slots = tokio::sync::Semaphore::new(config.concurrency.max(1));
        Self { config, executable, slots }
    }

    /// Whether renders can run.
    pub fn status(&self) -> RendererStatus {
        match &self.executable {
            Ok(p) => RendererStatus {
                available: true,
                executable: Some(p.display().to_string()),
                reason: None,
            },
            Err(e) => {
                RendererStatus { available: false, executable: None, reason: Some(e.clone()) }
            }
        }
    }

    /// Opens `url`, waits until the JavaScript expression `ready` is true (or
    /// [`RenderConfig::ready_within`] passes), and captures the page as `format`.
    #[base::boxed]
    pub async fn render(
        &self,
        url: &str,
        ready: &str,
        format: Format,
    ) -> Result<Vec<u8>, RenderError> {
        let executable = self.executable.clone().map_err(RenderError::Unavailable)?;
        // A render waits its turn a while (a scheduled report beside a download) before
        // saying the renderer is busy.
        let _slot = tokio::time::timeout(self.config.queue_wait, self.slots.acquire())
            .await
            .map_err(|_| RenderError::Busy)?
            .map_err(|_| RenderError::Busy)?;
        let profile = tempfile::tempdir()
            .map_err(|e| RenderError::Browser(format!("a profile directory: {e}")))?;
        let mut config = BrowserConfig::builder()
            .chrome_executable(&executable)
            .user_data_dir(profile.path())
            .window_size(self.config.window.0, self.config.window.1)
            .viewport(None)
            .launch_timeout(Duration::from_secs(20))
            .request_timeout(Duration::from_secs(30))
            .args([
                "--disable-gpu",
                "--no-first-run",
                "--disable-dev-shm-usage",
                "--hide-scrollbars",
            ]);
        // Chromium will not start its sandbox as root; a container running us as root is
        // common. The page is this server's own.
        if rustix::process::geteuid().is_root() {
            config = config.no_sandbox();
        }
        let config = config.build().map_err(RenderError::Browser)?;
        let (mut browser, mut handler) =
            Browser::launch(config).await.map_err(|e| RenderError::Browser(e.to_string()))?;
        let events = tokio::spawn(async move { while handler.next().await.is_some() {} });
        let capture =
            tokio::time::timeout(self.config.timeout, self.capture(&browser, url, ready, format))
                .await;
        // Whatever happened, the browser goes.
        if browser.close().await.is_err()
            || tokio::time::timeout(Duration::from_secs(5), browser.wait()).await.is_err()
        {
            let _ = browser.kill().await;
        }
        events.abort();
        match capture {
            Ok(result) => result,
            Err(_) => Err(RenderError::Timeout(self.config.timeout)),
        }
    }

    async fn capture(
        &self,
        browser: &Browser,
        url: &str,
        ready: &str,
        format: Format,
    ) -> Result<Vec<u8>, RenderError> {
        let fail = |e: chromiumoxide::error::CdpError| RenderError::Browser(e.to_string());
        let page = browser.new_page(url).await.map_err(fail)?;
        page.wait_for_navigation().await.map_err(fail)?;
        let deadline = tokio::time::Instant::now() + self.config.ready_within;
        loop {
            let done = page
                .evaluate(ready)
                .await
                .ok()
                .and_then(|r| r.into_value::<bool>().ok())
                .unwrap_or(false);
            if done {
                break;
            }
            if tokio::time::Instant::now() >= deadline {
                tracing::info!(%url, "the page did not say it was ready; capturing what it shows");
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        // Charts finish their entry animation.
        tokio::time::sleep(Duration::from_millis(700)).await;
        match format {
            Format::Png => page
                .screenshot(
                    ScreenshotParams::builder()
                        .format(CaptureScreenshotFormat::Png)
                        .full_page(true)
                        .build(),
                )
                .await
                .map_err(fail),
            Format::Pdf => page
                .pdf(PrintToPdfParams {
                    landscape: Some(true),
                    print_background: Some(true),
                    // A4, with the 1400-pixel window scaled to its width.
                    paper_width: Some(11.69),
                    paper_height: Some(8.27),
                    margin_top: Some(0.4),
                    margin_bottom: Some(0.4),
                    margin_left: Some(0.4),
                    margin_right: Some(0.4),
                    scale: Some(0.72),
                    ..PrintToPdfParams::default()
                })
                .await
                .map_err(fail),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_browser_is_the_configured_one_or_found_on_path() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("chromium-browser");
        std::fs::write(&bin, "").unwrap();
        let path = std::env::join_paths([Path::new("/nonexistent"), dir.path()]).unwrap();
        assert_eq!(find_executable(None, Some(&path)).unwrap(), bin);
        assert_eq!(find_executable(Some(&bin), None).unwrap(), bin);
        let e = find_executable(None, Some(std::ffi::OsStr::new("/nonexistent"))).unwrap_err();
        assert!(e.contains("apt install chromium") && e.contains(CHROMIUM_VAR), "{e}");
        let e = find_executable(Some(Path::new("/no/such")), None).unwrap_err();
        assert!(e.contains("/no/such"), "{e}");
    }

    #[tokio::test]
    async fn without_a_browser_renders_say_how_to_get_one() {
        let r = Renderer {
            config: RenderConfig::default(),
            executable: Err("no browser".into()),
            slots: tokio::sync::Semaphore::new(1),
        };
        assert!(!r.status().available);
        let e = r.render("http://127.0.0.1:9/", "true", Format::Png).await.unwrap_err();
        assert!(matches!(e, RenderError::Unavailable(_)), "{e}");
    }
}
