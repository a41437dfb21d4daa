//! Worker process main loop. (stub)

/// Runs the worker on stdin/stdout.
pub fn main() -> std::process::ExitCode {
    std::process::ExitCode::FAILURE
}
