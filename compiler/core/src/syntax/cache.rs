//! Parses kept from one check to the next, for editors: a file is parsed chunk by chunk (one
//! chunk per top-level item), and a chunk's parse depends only on its text, where it starts and
//! how the scanner cut it. So after an edit, every chunk whose text is unchanged is taken from
//! the cache and moved to where it now starts ([`crate::ast::Shift`]); only the edited item is
//! parsed again. Pure: the caller owns the cache and passes it to [`crate::check_cached`].

use super::Parsed;
use super::chunks::Chunk;
use crate::ast::Shift;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use tenx_diagnostics::FileId;

/// What a chunk's parse depends on, apart from its text and where it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct ChunkKey {
    file: FileId,
    /// A hash of the text (the text itself is compared on a hit).
    hash: u64,
    truncated: bool,
    /// Where nesting went too deep, from the chunk's start.
    too_deep_at: Option<usize>,
}

/// A kept parse: the chunk's text, where it started, and its parse.
#[derive(Debug)]
struct Kept {
    text: String,
    start: usize,
    parsed: Parsed,
}

type Shelf = HashMap<ChunkKey, Vec<Kept>>;

/// Chunk parses of the last check, by text.
#[derive(Debug, Default)]
pub struct ParseCache {
    /// From the check before.
    kept: Shelf,
    /// Filled by this check; becomes `kept` at [`ParseCache::finish`].
    fresh: Shelf,
    /// Chunks taken from the cache since it was made (for tests and benchmarks).
    pub reused: usize,
    /// Chunks parsed because the cache did not hold them.
    pub parsed: usize,
}

fn key(file: FileId, text: &str, chunk: &Chunk) -> ChunkKey {
    let mut hasher = std::hash::DefaultHasher::new();
    text.hash(&mut hasher);
    ChunkKey {
        file,
        hash: hasher.finish(),
        truncated: chunk.truncated,
        too_deep_at: chunk.too_deep_at.map(|at| at.saturating_sub(chunk.start)),
    }
}

/// Takes the kept parse of `text` under `key` out of `shelf`.
fn take(shelf: &mut Shelf, key: &ChunkKey, text: &str) -> Option<Kept> {
    let list = shelf.get_mut(key)?;
    let at = list.iter().position(|k| k.text == text)?;
    Some(list.swap_remove(at))
}

impl ParseCache {
    /// An empty cache.
    pub fn new() -> Self {
        ParseCache::default()
    }

    /// The parses of `chunks` of `text`, in order: each cached one moved to its chunk's start,
    /// the others from `parse_missing` (given the chunks the cache lacks, in order).
    pub(super) fn parse_all<'c>(
        &mut self,
        file: FileId,
        text: &str,
        chunks: &[&'c Chunk],
        parse_missing: impl FnOnce(&[&'c Chunk]) -> Vec<Parsed>,
    ) -> Vec<Parsed> {
        let mut found: Vec<(ChunkKey, &str, Option<Kept>)> = Vec::with_capacity(chunks.len());
        let mut missing: Vec<&'c Chunk> = Vec::new();
        for chunk in chunks {
            let chunk_text = text.get(chunk.start..chunk.end).unwrap_or("");
            let key = key(file, chunk_text, chunk);
            // Two chunks with one text: the second may find the first's parse already moved on.
            let kept = take(&mut self.kept, &key, chunk_text).or_else(|| {
                let twin = self.fresh.get(&key)?.iter().find(|k| k.text == chunk_text)?;
                Some(Kept {
                    text: twin.text.clone(),
                    start: twin.start,
                    parsed: twin.parsed.clone(),
                })
            });
            if kept.is_none() {
                missing.push(chunk);
            }
            found.push((key, chunk_text, kept));
        }
        self.reused += chunks.len() - missing.len();
        self.parsed += missing.len();
        let mut parsed_now = parse_missing(&missing).into_iter();
        let mut out = Vec::with_capacity(chunks.len());
        for (chunk, (key, chunk_text, kept)) in chunks.iter().zip(found) {
            let kept = match kept {
                Some(mut kept) => {
                    let by = i64::try_from(chunk.start).unwrap_or(0) - i64::try_from(kept.start).unwrap_or(0);
                    if by != 0 {
                        kept.parsed.module.items.shift(by);
                        kept.parsed.diagnostics.shift(by);
                        kept.parsed.broken.shift(by);
                    }
                    kept.start = chunk.start;
                    kept
                }
                None => {
                    let Some(parsed) = parsed_now.next() else { continue };
                    Kept {
                        text: chunk_text.to_string(),
                        start: chunk.start,
                        parsed,
                    }
                }
            };
            out.push(kept.parsed.clone());
            self.fresh.entry(key).or_default().push(kept);
        }
        out
    }

    /// Ends a check: what it parsed is kept for the next one, and the rest is dropped.
    pub fn finish(&mut self) {
        self.kept = std::mem::take(&mut self.fresh);
    }
}
