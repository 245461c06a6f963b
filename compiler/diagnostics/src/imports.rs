//! Which file each `import "…"` of a compilation resolved to, or why it was refused.
//!
//! The reader that loads a program's files (the CLI reads the disk; tests read fixtures) records
//! every file import it meets in the [`crate::SourceSet`], and the compiler's resolve stage turns
//! a refusal into a diagnostic at the import. Nothing here reads a file.

/// Why an imported file was not read. None of these carries any content of the file: a refused
/// import never shows what it points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportRefusal {
    /// Nothing exists at the path.
    NotFound,
    /// The path resolves (after following links) outside the project folder.
    OutsideProject {
        /// The project folder, as shown to the user.
        project: String,
    },
    /// The path is a directory, a device, a pipe or a socket: not a regular file.
    NotAFile {
        /// What it is instead: `a directory`, `a device`, …
        kind: &'static str,
    },
    /// The file is larger than the compiler reads.
    TooLarge {
        /// Its size in bytes.
        bytes: u64,
        /// The most a source file may hold, in bytes.
        limit: u64,
    },
    /// It exists but cannot be read (permissions, a broken link, an IO error).
    Unreadable {
        /// The operating system's reason, without the path.
        reason: String,
    },
}
