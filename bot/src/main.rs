//! The `navin` binary: everything lives in the library.

fn main() -> std::process::ExitCode {
    navin_bot::cli::main()
}
