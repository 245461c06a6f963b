//! The `tenx` binary: everything is in the library ([`tenx::main_with`]).

fn main() -> std::process::ExitCode {
    tenx::main_with(std::env::args_os())
}
