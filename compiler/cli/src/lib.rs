//! The library half of `tenxc`: what the commands print that tests also need.
//!
//! [`picture`] draws the graphs of a compiled artifact as Mermaid or Graphviz DOT text
//! (`tenxc graph`). Everything else of the command-line tool (flags, files, diagnostics output)
//! lives in the binary.

pub mod picture;
