//! The library half of `tenxc`: what the commands do that tests also need.
//!
//! [`disk`] reads a program's files, confined to its project folder; [`programs`] finds the
//! `.tenx` files of a command line and the program roots among them; [`picture`] draws the
//! graphs of a compiled artifact as Mermaid or Graphviz DOT text (`tenxc graph`). Everything else
//! of the command-line tool (flags, diagnostics output) lives in the binary.

pub mod disk;
pub mod picture;
pub mod programs;
