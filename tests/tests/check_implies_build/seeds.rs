//! The programs mutations start from: every fixture, every example's root file, every port of a
//! public example (`tests/ports/`), and every ```` ```tenx ```` block of the catalog pages and of
//! `docs/language.md`. Each keeps the name it is checked under (its path in the repository), so
//! that its imports resolve as they do in the other tests.

use tenx_tests::{files_under, port_files, repo_root, tenx_blocks};

/// One starting program.
pub struct Seed {
    /// The root file's name, relative to the repository root.
    pub name: String,
    /// Its text.
    pub text: String,
}

/// Every seed, in a fixed order (sorted paths, blocks in file order).
pub fn all() -> Vec<Seed> {
    let root = repo_root();
    let mut seeds = Vec::new();
    let relative = |path: &std::path::Path| {
        path.strip_prefix(&root)
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/")
    };
    for path in files_under(&root.join("tests/fixtures"), "tenx") {
        if path.components().any(|c| c.as_os_str() == "support") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        seeds.push(Seed {
            name: relative(&path),
            text,
        });
    }
    for path in files_under(&root.join("examples"), "tenx") {
        if path.file_name().is_some_and(|n| n == "main.tenx") {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            seeds.push(Seed {
                name: relative(&path),
                text,
            });
        }
    }
    for path in port_files() {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        seeds.push(Seed {
            name: relative(&path),
            text,
        });
    }
    let pages = files_under(&root.join("compiler/diagnostics/codes"), "md");
    for page in pages.iter().chain(std::iter::once(&root.join("docs/language.md"))) {
        let markdown = std::fs::read_to_string(page).unwrap_or_default();
        for (i, (_, code)) in tenx_blocks(&markdown).into_iter().enumerate() {
            // A block is checked as a file next to its page, as the catalog test does.
            let name = relative(page).replace(".md", &format!("_{}.tenx", i + 1));
            seeds.push(Seed { name, text: code });
        }
    }
    seeds
}
