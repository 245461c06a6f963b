//! The `tenx` binary: everything is in the library ([`tenx::main_with`]). Its allocator is
//! mimalloc: a served turn is mostly small allocations made and freed on tokio's worker threads,
//! which glibc's malloc served slowest of everything in the request path (bench/README.md).

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    tenx::main_with(std::env::args_os())
}
