//! The fan-out benchmark's programs (`bench/programs/fanout_*.tenx`) and one run of each, shared
//! by `src/bin/fanout/` and its smoke test: [`Program`] names them, [`seal`] compiles and seals
//! one with the compiler library and loads it as the runtime does, [`engine`] builds its engine
//! with the host's builder (the real `http` tool runner against the fetch stand-in, scripted
//! models, the in-memory store), and [`run_once`] runs it on a new thread and checks what came
//! back: completed, one fetch result per branch, the writer's answer last.

use std::path::Path;
use std::sync::Arc;

use tenx_artifact::{LoadedArtifact, TrustPolicy};
use tenx_compiler::LintLevels;
use tenx_diagnostics::SourceSet;
use tenx_engine::ports::NullEvents;
use tenx_engine::wire::{ContentBlock, ExecutionStatus, Message, Role};
use tenx_engine::{Engine, MemoryStore, RunRequest};
use tenx_runtime::HostBuilder;

/// What the writer answers last in every program.
pub const WRITER_ANSWER: &str = "The report is written.";

/// The three programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Program {
    /// Planner → one worker → writer.
    One,
    /// Planner → eight workers one after another → writer.
    Sequential,
    /// Planner → eight workers as parallel branches → writer.
    Parallel,
}

impl Program {
    /// Every program, in the order the bench runs them.
    pub const ALL: [Self; 3] = [Self::One, Self::Sequential, Self::Parallel];

    /// Its file, relative to the workspace root.
    #[must_use]
    pub fn path(self) -> &'static str {
        match self {
            Self::One => "bench/programs/fanout_one.tenx",
            Self::Sequential => "bench/programs/fanout_sequential.tenx",
            Self::Parallel => "bench/programs/fanout_parallel.tenx",
        }
    }

    /// How many workers (fetches) one run makes.
    #[must_use]
    pub fn workers(self) -> usize {
        match self {
            Self::One => 1,
            Self::Sequential | Self::Parallel => 8,
        }
    }

    /// Its name in the table.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::One => "one branch",
            Self::Sequential => "sequential 8",
            Self::Parallel => "parallel 8",
        }
    }
}

/// Compiles `program` (under the workspace `root`) with the compiler library, seals it and
/// loads the sealed bytes as `tenx serve` does. `Err` names the error with the lowest code the
/// compiler reported (or why sealing or loading failed).
///
/// # Errors
///
/// The file cannot be read, the program has errors, or its artifact does not seal or load.
pub fn seal(root: &Path, program: Program) -> Result<LoadedArtifact, String> {
    let path = program.path();
    let text = std::fs::read_to_string(root.join(path)).map_err(|error| format!("reading {path}: {error}"))?;
    let mut sources = SourceSet::new();
    let file = sources.add(path, text);
    let compiled = tenx_compiler::compile(&mut sources, file, &LintLevels::default());
    let Some(artifact) = compiled.artifact else {
        let mut errors: Vec<_> = compiled.diagnostics.iter().filter(|d| d.is_error()).collect();
        // The lowest code first: a syntax error (TENX0001) explains the others.
        errors.sort_by_key(|d| d.code.as_str());
        let first = errors
            .first()
            .map_or_else(String::new, |d| format!(", {}: {}", d.code, d.message));
        return Err(format!("{path} does not compile ({} errors{first})", errors.len()));
    };
    let sealed = tenx_artifact::seal(artifact).map_err(|error| format!("{path} does not seal: {error}"))?;
    tenx_artifact::load(&sealed.to_bytes(), &TrustPolicy::signature_optional())
        .map_err(|error| format!("{path}'s artifact does not load: {error}"))
}

/// An engine for `artifact` as a host builds it: its `fetch` tool an `http` call to `url`
/// (`FANOUT_URL`), its scripted models, the in-memory store, the system clock.
///
/// # Errors
///
/// The host refuses the artifact.
pub fn engine(artifact: LoadedArtifact, url: &str) -> Result<Engine, String> {
    HostBuilder::new(artifact)
        .store(Arc::new(MemoryStore::new()))
        .build(|name| (name == "FANOUT_URL").then(|| url.to_owned()))
        .map_err(|error| format!("the host refused the artifact: {error}"))
}

/// One full run of `program` on the new thread `thread`. Checks that it completed, that each
/// of its workers' fetches came back as a tool result that is not an error (the engine hands a
/// failed call to the model as an error result, and the run goes on), and that the writer
/// answered last.
///
/// # Errors
///
/// The run failed or ended otherwise.
pub async fn run_once(engine: &Engine, program: Program, thread: &str) -> Result<(), String> {
    let request = RunRequest {
        thread_id: Some(thread.to_owned()),
        messages: vec![Message::text(String::new(), Role::User, "Research the topics.", 0.0)],
        ..RunRequest::default()
    };
    let output = engine
        .run(request, &mut NullEvents)
        .await
        .map_err(|error| format!("run on {thread} failed: {error:?}"))?;
    let status = output.thread.execution.status;
    if status != ExecutionStatus::Completed {
        return Err(format!("thread {thread} ended {status:?}, not completed"));
    }
    let results: Vec<&ContentBlock> = output
        .messages
        .iter()
        .filter(|message| message.role == Role::Tool)
        .flat_map(|message| &message.content)
        .filter(|block| matches!(block, ContentBlock::ToolResult { .. }))
        .collect();
    if results.len() != program.workers() {
        return Err(format!(
            "thread {thread} has {} tool results, not {}",
            results.len(),
            program.workers()
        ));
    }
    if let Some(ContentBlock::ToolResult { output, .. }) = results
        .iter()
        .find(|block| matches!(block, ContentBlock::ToolResult { is_error: true, .. }))
    {
        return Err(format!("a fetch on thread {thread} failed: {output}"));
    }
    let last = output
        .messages
        .last()
        .map(|message| message.text_content())
        .unwrap_or_default();
    if last != WRITER_ANSWER {
        return Err(format!("thread {thread} ended with {last:?}, not the writer's answer"));
    }
    Ok(())
}
