//! The `resetctl` binary: everything lives in the `resetctl_cli` library so
//! tests can reach the clap definitions; this only hands over the arguments.

fn main() -> std::process::ExitCode {
    resetctl_cli::run(std::env::args_os())
}
