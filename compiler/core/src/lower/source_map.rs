//! The artifact's source map: where each graph, node, edge, route, agent, tool, model, validator
//! and interrupt was declared, as a file, line and column.
//!
//! File names are made relative to the folder of the root file, so the same program gives the
//! same source map however the compiler was invoked: `tenxc build examples/desk/main.tenx` from
//! the repository, `tenxc build main.tenx` from `examples/desk/`, or an absolute path all give
//! `main.tenx` and `tools.tenx`. Standard library files keep their `<stdlib>/name.tenx` names.

use tenx_artifact::SourceLocation;
use tenx_diagnostics::{FileId, SourceSet, Span};

/// Turns spans into [`SourceLocation`]s with root-relative file names.
#[derive(Debug)]
pub(super) struct SourceMapper<'a> {
    sources: &'a SourceSet,
    /// The segments of the root file's folder (`["examples", "desk"]`), empty for the current one.
    root_dir: Vec<&'a str>,
}

impl<'a> SourceMapper<'a> {
    pub(super) fn new(sources: &'a SourceSet, root: FileId) -> Self {
        let root_dir = sources
            .get(root)
            .and_then(|file| file.name.rsplit_once('/'))
            .map(|(dir, _)| segments(dir))
            .unwrap_or_default();
        SourceMapper { sources, root_dir }
    }

    /// The location of the start of `span` in `file`.
    pub(super) fn location(&self, file: FileId, span: Span) -> Option<SourceLocation> {
        let source = self.sources.get(file)?;
        let at = source.line_col(span.start as usize);
        Some(SourceLocation {
            file: self.file_name(file)?,
            line: u32::try_from(at.line).unwrap_or(u32::MAX),
            column: u32::try_from(at.column).unwrap_or(u32::MAX),
        })
    }

    /// The name of `file` relative to the root's folder, with `/` separators.
    pub(super) fn file_name(&self, file: FileId) -> Option<String> {
        let name = self.sources.get(file)?.name.as_str();
        if name.starts_with("<stdlib>/") {
            return Some(name.to_string());
        }
        Some(relative(&self.root_dir, name))
    }
}

/// The non-empty, non-`.` segments of a `/`-separated path (a leading `/` is kept as `""`).
fn segments(path: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for (i, segment) in path.split('/').enumerate() {
        if (segment.is_empty() && i > 0) || segment == "." {
            continue;
        }
        out.push(segment);
    }
    out
}

/// `name` as a path relative to the folder `dir`: the common leading segments are dropped, and
/// each remaining segment of `dir` becomes `..`.
fn relative(dir: &[&str], name: &str) -> String {
    let parts = segments(name);
    let common = dir.iter().zip(&parts).take_while(|(a, b)| a == b).count();
    let ups = dir.len().saturating_sub(common);
    let mut out: Vec<&str> = vec![".."; ups];
    out.extend(parts.iter().skip(common));
    out.join("/")
}

#[cfg(test)]
mod tests {
    use super::{relative, segments};

    #[test]
    fn names_are_relative_to_the_root_folder() {
        let dir = segments("examples/desk");
        assert_eq!(relative(&dir, "examples/desk/main.tenx"), "main.tenx");
        assert_eq!(relative(&dir, "examples/desk/lib/tools.tenx"), "lib/tools.tenx");
        assert_eq!(relative(&dir, "examples/shared/tools.tenx"), "../shared/tools.tenx");
        let absolute = segments("/home/me/desk");
        assert_eq!(relative(&absolute, "/home/me/desk/main.tenx"), "main.tenx");
        assert_eq!(relative(&[], "main.tenx"), "main.tenx");
        assert_eq!(relative(&segments(""), "/main.tenx"), "main.tenx");
        assert_eq!(relative(&segments("."), "./main.tenx"), "main.tenx");
    }
}
