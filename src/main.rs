//! The `boardsmith` binary.
fn main() -> std::process::ExitCode {
    if std::env::args().nth(1).as_deref() == Some(boardsmith::sandbox::WORKER_SUBCOMMAND) {
        return boardsmith::sandbox::worker::main();
    }
    std::process::ExitCode::SUCCESS
}
