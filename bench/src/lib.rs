//! The program generator shared by the compiler benchmarks (`src/main.rs`, `src/bin/lsp.rs`), and
//! what the served benchmarks (`src/bin/serve/`, `src/bin/scale/`) share with each other and
//! with their smoke test: the HTTP load generator, the bare axum JSON handler it measures as the
//! ceiling, the server processes under load, and the payments stand-in that counts refunds. The
//! in-process benchmarks (`src/bin/engine/`, `src/bin/fanout/`) share their figures and the
//! LangGraph venv; the fan-out bench's programs, runs and fetch stand-in are here for its smoke
//! test.

pub mod bare;
pub mod child;
pub mod fanout;
pub mod fetch;
pub mod figures;
pub mod generate;
pub mod load;
pub mod standin;
pub mod venv;
