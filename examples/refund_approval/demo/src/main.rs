//! `refund-demo`: the binary only calls [`refund_demo::main_with`], so tests run the same code
//! in a child process of their own.

fn main() -> std::process::ExitCode {
    refund_demo::main_with(std::env::args_os())
}
