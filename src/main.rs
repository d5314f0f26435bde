//! The `gitops-lint` binary: the only place that writes to the terminal.

mod cli;

fn main() -> std::process::ExitCode {
    cli::run()
}
