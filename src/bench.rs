//! `boardsmith bench ...`: performance measurements printed as tables. (in progress)

use std::process::ExitCode;

/// Sandbox benchmark.
pub async fn sandbox(_iterations: usize) -> anyhow::Result<ExitCode> {
    Ok(ExitCode::SUCCESS)
}
