//! `tenxc dev PATH`: compile a program, serve it as `tenx serve` would, and rebuild and reload
//! when one of its `.tenx` files changes. Threads live in the one store across reloads. A
//! source that no longer checks prints its diagnostics and the last good graph keeps serving.
//!
//! A thread paused at a question under an earlier build gets it asked again under the new one
//! (the engine's `reask_after_reload`, which only `tenxc dev` turns on): a new interrupt id, the
//! new build's policy revision in the fingerprint, a fresh expiry; the old id is refused. A
//! question the new build cannot ask as it was is withdrawn and nothing runs. This happens at
//! every reload, at start (threads an earlier `tenxc dev` left), and on the first request to
//! such a thread.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use miette::{IntoDiagnostic, Result, miette};
use notify::{RecursiveMode, Watcher};
use tenx_artifact::{LoadedArtifact, TrustPolicy};
use tenx_engine::ReaskOutcome;
use tenx_engine::ports::{NullEvents, Store};

use crate::check_cmd::{self, ReportArgs};
use crate::files;

#[derive(Debug, Args)]
pub struct DevArgs {
    /// The program's root `.tenx` file, or a directory that holds one program.
    #[arg(value_name = "PATH")]
    pub path: PathBuf,
    #[command(flatten)]
    pub server: tenx::serve::ServerFlags,
    #[command(flatten)]
    pub report: ReportArgs,
}

pub fn run(args: &DevArgs) -> Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .into_diagnostic()?;
    runtime.block_on(serve(args))
}

async fn serve(args: &DevArgs) -> Result<ExitCode> {
    tenx::serve::init_logging();
    let mut resolved = tenx::serve::resolve(&args.server, args.report.lints.config.as_deref())?;
    tenx::serve::connect_rate_limiter(&mut resolved).await?;
    let Some(loaded) = compile(args)? else {
        return Ok(ExitCode::from(1));
    };
    let store = tenx::serve::open_store(&resolved).await?;
    let engine = tenx::serve::build_dev_engine(&loaded, &resolved, store.clone()).await?;
    engine
        .recover(&mut NullEvents)
        .await
        .map_err(|error| miette!("recovery at start-up failed: {error}"))?;
    reask(&engine).await;
    let state = tenx_server::AppState::new(engine, resolved.server.clone()).map_err(|error| miette!("{error}"))?;
    let watch_root = watch_root(&args.path);
    let (changes_tx, changes) = tokio::sync::mpsc::unbounded_channel();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        // Only changes count: reading the sources (the rebuild does) must not trigger another.
        if let Ok(event) = event
            && is_change(&event.kind)
            && event
                .paths
                .iter()
                .any(|path| path.extension().is_some_and(|ext| ext == "tenx"))
        {
            let _ = changes_tx.send(());
        }
    })
    .into_diagnostic()?;
    watcher.watch(&watch_root, RecursiveMode::Recursive).into_diagnostic()?;
    tokio::spawn(reload_loop(
        ReloadContext {
            path: args.path.clone(),
            report: args.report.clone(),
            resolved: resolved.clone(),
            store,
            state: state.clone(),
            current: loaded.id.to_string(),
        },
        changes,
    ));
    eprintln!(
        "tenxc dev: watching {} for changes to .tenx files",
        watch_root.display()
    );
    let label = format!("{} ({})", args.path.display(), loaded.id);
    tenx::serve::listen(state, &resolved, &label).await?;
    drop(watcher);
    Ok(ExitCode::SUCCESS)
}

struct ReloadContext {
    path: PathBuf,
    report: ReportArgs,
    resolved: tenx::settings::Resolved,
    store: Arc<dyn Store>,
    state: tenx_server::AppState,
    current: String,
}

/// Rebuilds after each burst of changes (settled for 200 ms) and swaps the engine when the
/// program compiles to a new artifact.
async fn reload_loop(mut context: ReloadContext, mut changes: tokio::sync::mpsc::UnboundedReceiver<()>) {
    while changes.recv().await.is_some() {
        while let Ok(Some(())) = tokio::time::timeout(Duration::from_millis(200), changes.recv()).await {}
        let path = context.path.clone();
        let report = context.report.clone();
        let compiled = tokio::task::spawn_blocking(move || compile_quiet(&path, &report)).await;
        let loaded = match compiled {
            Ok(Ok(Some(loaded))) => loaded,
            Ok(Ok(None)) => {
                eprintln!("tenxc dev: the program has errors; still serving {}", context.current);
                continue;
            }
            Ok(Err(error)) => {
                eprintln!("{error:?}\ntenxc dev: still serving {}", context.current);
                continue;
            }
            Err(_) => continue,
        };
        if loaded.id.to_string() == context.current {
            continue;
        }
        match tenx::serve::build_dev_engine(&loaded, &context.resolved, context.store.clone()).await {
            Ok(engine) => {
                context.state.replace_engine(engine.clone());
                context.current = loaded.id.to_string();
                eprintln!("tenxc dev: reloaded, now serving {}", context.current);
                reask(&engine).await;
            }
            Err(error) => eprintln!("{error:?}\ntenxc dev: still serving {}", context.current),
        }
    }
}

/// Asks the questions of threads an earlier build paused again under `engine`, and says what
/// became of each.
async fn reask(engine: &tenx_engine::Engine) {
    let report = match engine.reask_after_reload(&mut NullEvents).await {
        Ok(report) => report,
        Err(error) => {
            eprintln!("tenxc dev: cannot ask pending questions again: {error}");
            return;
        }
    };
    for thread in report.threads {
        let id = &thread.thread_id;
        match thread.outcome {
            ReaskOutcome::Reasked { previous, interrupt_id } => {
                eprintln!("tenxc dev: thread {id}: asked again as {interrupt_id} (was {previous})");
            }
            ReaskOutcome::Superseded { previous, reason } => {
                eprintln!("tenxc dev: thread {id}: withdrew {previous}, nothing ran: {reason}");
            }
            ReaskOutcome::Expired => eprintln!("tenxc dev: thread {id}: its question had expired"),
            ReaskOutcome::Busy => {
                eprintln!("tenxc dev: thread {id}: busy; its question is asked again on its next request")
            }
            ReaskOutcome::Failed(error) => eprintln!("tenxc dev: thread {id}: cannot ask again: {error}"),
        }
    }
}

/// Compiles, prints the diagnostics, and seals and loads the artifact when there is no error.
fn compile(args: &DevArgs) -> Result<Option<LoadedArtifact>> {
    compile_quiet(&args.path, &args.report)
}

fn compile_quiet(path: &Path, report: &ReportArgs) -> Result<Option<LoadedArtifact>> {
    let lints = report.lints.lint_levels()?;
    let config = report.lints.config.as_deref();
    let mut program = files::compile_program(path, "dev", &lints, config)?;
    let errors = check_cmd::print_diagnostics(report, &mut program.diagnostics, &program.sources, &program.coverage);
    let Some(artifact) = program.artifact.filter(|_| errors == 0) else {
        return Ok(None);
    };
    let sealed =
        tenx_artifact::seal(artifact).map_err(|error| miette!("internal error: cannot seal the artifact: {error}"))?;
    tenx_artifact::load(&sealed.to_bytes(), &TrustPolicy::signature_optional())
        .map(Some)
        .map_err(|error| miette!("internal error: the sealed artifact does not load: {error}"))
}

/// Whether an event changes a file's content, name or existence.
fn is_change(kind: &notify::EventKind) -> bool {
    use notify::EventKind;
    use notify::event::ModifyKind;
    match kind {
        EventKind::Create(_) | EventKind::Remove(_) => true,
        EventKind::Modify(ModifyKind::Metadata(_)) => false,
        EventKind::Modify(_) => true,
        EventKind::Any | EventKind::Access(_) | EventKind::Other => false,
    }
}

/// The folder to watch: the root file's folder, or the directory given.
fn watch_root(path: &Path) -> PathBuf {
    if path.is_dir() {
        return path.to_path_buf();
    }
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}
