//! The test harness shared by the fixture, catalog and example tests: check a program read from
//! disk the way `tenxc check` does, render its diagnostics without colour, and read the
//! `// expect:` header of a fixture.

pub mod formatting;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use tenx_compiler::LintLevels;
use tenx_diagnostics::render::{HumanOptions, render_human};
use tenx_diagnostics::{Diagnostic, SourceSet};

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The result of checking one program.
#[derive(Debug)]
pub struct Outcome {
    /// The files read (the root, its imports, the stdlib modules used).
    pub sources: SourceSet,
    /// What the compiler reported.
    pub diagnostics: Vec<Diagnostic>,
}

impl Outcome {
    /// The set of codes reported.
    pub fn codes(&self) -> BTreeSet<String> {
        self.diagnostics.iter().map(|d| d.code.as_str().to_string()).collect()
    }

    /// The diagnostics rendered for people, without colour.
    pub fn rendered(&self) -> String {
        render_human(&self.diagnostics, &self.sources, HumanOptions { color: false })
    }
}

/// Checks `text` as the root file named `name` (relative to the repository root, with `/`).
/// Files it imports are read from disk relative to the repository root, as `tenxc check`
/// reads them: confined to the root's folder, at most [`tenxc::disk::MAX_SOURCE_BYTES`] each.
pub fn check_text(name: &str, text: &str) -> Outcome {
    check_text_with_limit(name, text, tenxc::disk::MAX_SOURCE_BYTES)
}

/// [`check_text`] with another limit on the size of an imported file.
pub fn check_text_with_limit(name: &str, text: &str, limit: u64) -> Outcome {
    let (mut sources, root, mut diagnostics) = load_text(name, text, limit);
    let checked = tenx_compiler::check(&mut sources, root, &LintLevels::default());
    diagnostics.extend(checked.diagnostics);
    tenx_diagnostics::sort_and_dedup(&mut diagnostics);
    Outcome { sources, diagnostics }
}

/// Loads `text` as the root file named `name` (relative to the repository root) and the files it
/// imports, as `tenxc check` reads them: from disk relative to the repository root, confined to
/// the root's folder, each at most `limit` bytes. Returns the files, the root, and the
/// diagnostics of loading (imported files that are not UTF-8).
#[expect(
    clippy::panic,
    reason = "test harness: a fixture outside any folder is a broken test"
)]
pub fn load_text(name: &str, text: &str, limit: u64) -> (SourceSet, tenx_diagnostics::FileId, Vec<Diagnostic>) {
    let mut sources = SourceSet::new();
    let root = sources.add(name, text);
    let mut reader = tenxc::disk::DiskReader::new(repo_root()).with_limit(limit);
    if let Err(refusal) = reader.enter_project_of(name, None) {
        panic!("cannot find the project folder of `{name}`: {refusal:?}");
    }
    let diagnostics = tenx_compiler::load_imports(&mut sources, root, &mut reader);
    (sources, root, diagnostics)
}

/// Compiles the program `text` (as the file `name`, relative to the repository root; imports are
/// read beside it) and seals it: the artifact's bytes, as `tenxc build` writes them. Diagnostics
/// with an error fail the caller's test.
#[expect(
    clippy::panic,
    reason = "test harness: a program that does not compile or seal is a broken test"
)]
pub fn sealed_bytes(name: &str, text: &str) -> Vec<u8> {
    let (mut sources, file, _) = load_text(name, text, tenxc::disk::MAX_SOURCE_BYTES);
    let checked = tenx_compiler::check(&mut sources, file, &tenx_compiler::LintLevels::default());
    let errors: Vec<&Diagnostic> = checked.diagnostics.iter().filter(|d| d.is_error()).collect();
    if !errors.is_empty() {
        panic!("`{name}` does not compile: {errors:#?}");
    }
    let facts = tenx_compiler::check::Facts::new(&checked.program, &sources);
    match tenx_artifact::seal(tenx_compiler::lower::lower(&facts)) {
        Ok(sealed) => sealed.to_bytes(),
        Err(error) => panic!("`{name}` does not seal: {error}"),
    }
}

/// Checks the file at `path` (absolute or relative to the repository root). A file that is not
/// valid UTF-8 gives its `TENX0006` diagnostic, as `tenxc check` does.
pub fn check_file(path: &Path) -> Outcome {
    let base = repo_root();
    let name = path
        .strip_prefix(&base)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/");
    let bytes = std::fs::read(base.join(&name)).unwrap_or_default();
    let mut sources = SourceSet::new();
    let (root, invalid) = tenx_compiler::add_source_bytes(&mut sources, &name, bytes);
    if let Some(diagnostic) = invalid {
        return Outcome {
            sources,
            diagnostics: vec![diagnostic],
        };
    }
    let text = sources.get(root).map(|f| f.text.clone()).unwrap_or_default();
    let limit = import_limit_header(&text).unwrap_or(tenxc::disk::MAX_SOURCE_BYTES);
    check_text_with_limit(&name, &text, limit)
}

/// The `// import-limit: BYTES` line of a fixture's header: the fixture is checked with that
/// limit on the size of an imported file instead of the real one (16 MiB), so that a fixture can
/// show what an import over the limit reports without a 16 MiB file in the repository.
pub fn import_limit_header(text: &str) -> Option<u64> {
    text.lines()
        .take(5)
        .find_map(|l| l.trim().strip_prefix("// import-limit:"))
        .and_then(|n| n.trim().parse().ok())
}

/// What a fixture's header expects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// `// expect: ok`: no diagnostic at all.
    Clean,
    /// `// expect: TENX0302, TENX0303`: exactly these codes (each at least once).
    Codes(BTreeSet<String>),
}

/// Reads the `// expect:` header from the first lines of a fixture.
pub fn expect_header(text: &str) -> Option<Expect> {
    let line = text.lines().take(5).find_map(|l| l.trim().strip_prefix("// expect:"))?;
    let line = line.trim();
    if line == "ok" {
        return Some(Expect::Clean);
    }
    Some(Expect::Codes(
        line.split([',', ' '])
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
    ))
}

/// Every file with extension `ext` under `dir`, sorted.
pub fn files_under(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == ext) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The ports of public agent-framework examples: every `tests/ports/*.tenx` and
/// `tests/ports/*/main.tenx`, sorted (see `tests/ports/README.md`).
pub fn port_files() -> Vec<PathBuf> {
    let dir = repo_root().join("tests/ports");
    files_under(&dir, "tenx")
        .into_iter()
        .filter(|path| {
            let depth = path.strip_prefix(&dir).map(|p| p.components().count()).unwrap_or(0);
            depth == 1 || (depth == 2 && path.file_name().is_some_and(|n| n == "main.tenx"))
        })
        .collect()
}

/// The fenced blocks of a Markdown file whose info string starts with `tenx`: (info, code).
pub fn tenx_blocks(markdown: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(String, String)> = None;
    for line in markdown.lines() {
        match &mut current {
            None => {
                if let Some(info) = line.trim_start().strip_prefix("```")
                    && info.trim().starts_with("tenx")
                {
                    current = Some((info.trim().to_string(), String::new()));
                }
            }
            Some((_, code)) => {
                if line.trim_start().starts_with("```") {
                    blocks.extend(current.take());
                } else {
                    code.push_str(line);
                    code.push('\n');
                }
            }
        }
    }
    blocks
}

/// Reseals an edited artifact envelope (its id recomputed from the edited body, so only the
/// loader's own checks can refuse it) and loads it: why `load` refused it, or `None` when it
/// loaded. An envelope whose id cannot be computed is refused as such.
pub fn reseal_and_load(mut envelope: serde_json::Value) -> Option<String> {
    let body = envelope.get("artifact").cloned().unwrap_or_default();
    let id = match tenx_artifact::ArtifactId::of_body(&body) {
        Ok(id) => id.to_string(),
        Err(error) => return Some(format!("cannot compute the id: {error}")),
    };
    if let Some(fields) = envelope.as_object_mut() {
        fields.insert("id".to_owned(), serde_json::Value::String(id));
    }
    let bytes = serde_json::to_vec(&envelope).unwrap_or_default();
    tenx_artifact::load(&bytes, &tenx_artifact::TrustPolicy::signature_optional())
        .err()
        .map(|error| error.to_string())
}
