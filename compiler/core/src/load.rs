//! Loading the files a program imports, through an [`ImportReader`] the caller provides: the
//! compiler decides which imports to follow and records what each resolved to in the
//! [`SourceSet`]; the reader decides where a path points, whether it may be read, and reads it.
//! The CLI's reader reads the disk and confines imports to the project folder; tests read
//! fixtures or memory ([`MemoryReader`]). Pure: all IO is the reader's.

use crate::resolve::import_file_name;
use std::collections::BTreeMap;
use tenx_diagnostics::{Diagnostic, FileId, ImportRefusal, SourceSet};

/// Finds and reads the files a program imports.
pub trait ImportReader {
    /// The display name of the file that `import "written"` in the file named `importer` points
    /// at, or why it may not be imported. The same file reached by two paths (a link, `a/../b`)
    /// must get the same name, so that it is loaded once.
    fn locate(&mut self, importer: &str, written: &str) -> Result<String, ImportRefusal>;

    /// The bytes of the file located as `name`.
    fn read(&mut self, name: &str) -> Result<Vec<u8>, ImportRefusal>;
}

/// Loads every file the root imports, transitively, into `sources`, and records what each file
/// import resolved to (see [`SourceSet::imported`]); a refused import is recorded with its
/// reason and reported by [`crate::check`] at the import. Imports recorded for an earlier
/// program are forgotten first, since what may be imported depends on the program. Returns the
/// `TENX0006` diagnostics of imported files that are not valid UTF-8 (they are kept, decoded
/// lossily, so that their diagnostics can point into them).
pub fn load_imports(sources: &mut SourceSet, root: FileId, reader: &mut impl ImportReader) -> Vec<Diagnostic> {
    sources.clear_imports();
    let mut diagnostics = Vec::new();
    let mut queue = vec![root];
    let mut seen = vec![root];
    while let Some(file) = queue.pop() {
        let Some(source) = sources.get(file) else { continue };
        let importer = source.name.clone();
        for written in crate::syntax::file_import_paths(&source.text) {
            if sources.imported(file, &written).is_some() {
                continue;
            }
            let target = reader
                .locate(&importer, &written)
                .and_then(|name| match sources.find(&name) {
                    Some(id) => Ok(id),
                    None => {
                        let bytes = reader.read(&name)?;
                        let (id, invalid) = crate::source::add_source_bytes(sources, &name, bytes);
                        diagnostics.extend(invalid);
                        Ok(id)
                    }
                });
            if let Ok(id) = target
                && !seen.contains(&id)
            {
                seen.push(id);
                queue.push(id);
            }
            sources.link_import(file, &written, target);
        }
    }
    diagnostics
}

/// The files a source imports with `import "…"`, as display names relative to `name` (see
/// [`import_file_name`]), without reading them.
pub fn file_imports(name: &str, text: &str) -> Vec<String> {
    crate::syntax::file_import_paths(text)
        .iter()
        .map(|path| import_file_name(name, path))
        .collect()
}

/// An [`ImportReader`] over files held in memory, by display name: for tests, fuzzing and hosts
/// that keep sources elsewhere. A path resolves as [`import_file_name`] says; a name it does not
/// hold is [`ImportRefusal::NotFound`].
#[derive(Debug, Clone, Default)]
pub struct MemoryReader {
    files: BTreeMap<String, Vec<u8>>,
}

impl MemoryReader {
    /// A reader holding no file.
    pub fn new() -> Self {
        MemoryReader::default()
    }

    /// Adds (or replaces) the file `name`.
    pub fn insert(&mut self, name: impl Into<String>, bytes: impl Into<Vec<u8>>) -> &mut Self {
        self.files.insert(name.into(), bytes.into());
        self
    }
}

impl ImportReader for MemoryReader {
    fn locate(&mut self, importer: &str, written: &str) -> Result<String, ImportRefusal> {
        let name = import_file_name(importer, written);
        if self.files.contains_key(&name) {
            Ok(name)
        } else {
            Err(ImportRefusal::NotFound)
        }
    }

    fn read(&mut self, name: &str) -> Result<Vec<u8>, ImportRefusal> {
        self.files.get(name).cloned().ok_or(ImportRefusal::NotFound)
    }
}

#[cfg(test)]
mod tests {
    use super::{ImportReader, MemoryReader, load_imports};
    use tenx_diagnostics::{ImportRefusal, SourceSet};

    #[test]
    fn imports_are_followed_once_and_refusals_recorded() {
        let main = "import \"tools.tenx\"\nimport \"./tools.tenx\"\nimport \"bad.tenx\"\n";
        let mut reader = MemoryReader::new();
        reader
            .insert("app/main.tenx", main)
            .insert("app/tools.tenx", "import \"main.tenx\"\nimport \"../secret.tenx\"\n")
            .insert("app/bad.tenx", vec![b't', 0xff]);
        let mut sources = SourceSet::new();
        let root = sources.add("app/main.tenx", main);
        let diagnostics = load_imports(&mut sources, root, &mut reader);
        let tools = sources.find("app/tools.tenx").unwrap();
        assert_eq!(sources.imported(root, "tools.tenx"), Some(&Ok(tools)));
        assert_eq!(sources.imported(root, "./tools.tenx"), Some(&Ok(tools)));
        assert_eq!(sources.imported(tools, "main.tenx"), Some(&Ok(root)));
        assert_eq!(
            sources.imported(tools, "../secret.tenx"),
            Some(&Err(ImportRefusal::NotFound))
        );
        assert_eq!(diagnostics.len(), 1, "the file that is not UTF-8 is reported once");
        assert_eq!(sources.len(), 3);
    }

    /// A reader that refuses everything must leave every import recorded as refused.
    struct Refuses;

    impl ImportReader for Refuses {
        fn locate(&mut self, _: &str, _: &str) -> Result<String, ImportRefusal> {
            Err(ImportRefusal::NotAFile { kind: "a device" })
        }
        fn read(&mut self, _: &str) -> Result<Vec<u8>, ImportRefusal> {
            Err(ImportRefusal::NotFound)
        }
    }

    #[test]
    fn a_refused_import_is_recorded_with_its_reason() {
        let mut sources = SourceSet::new();
        let root = sources.add("main.tenx", "import \"/dev/zero\"\n");
        assert!(load_imports(&mut sources, root, &mut Refuses).is_empty());
        assert_eq!(
            sources.imported(root, "/dev/zero"),
            Some(&Err(ImportRefusal::NotAFile { kind: "a device" }))
        );
        assert_eq!(sources.len(), 1);
    }
}
