//! Parses kept from one check to the next, for editors: a file is parsed chunk by chunk (one
//! chunk per top-level item), and a chunk's parse depends only on its text, where it starts and
//! how the scanner cut it. So after an edit, every chunk whose text is unchanged is taken from
//! the cache and moved to where it now starts ([`crate::ast::Shift`]); only the edited item is
//! parsed again. Pure: the caller owns the cache and passes it to [`crate::check_cached`].

use super::Parsed;
use super::chunks::Chunk;
use crate::ast::Shift;
use std::collections::HashMap;
use tenx_diagnostics::FileId;

/// What a chunk's parse depends on, apart from where it starts.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ChunkKey {
    file: FileId,
    text: String,
    truncated: bool,
    /// Where nesting went too deep, from the chunk's start.
    too_deep_at: Option<usize>,
}

/// Chunk parses of the last check, by text.
#[derive(Debug, Default)]
pub struct ParseCache {
    /// From the check before: the parse of each chunk and where the chunk started.
    kept: HashMap<ChunkKey, (usize, Parsed)>,
    /// Filled by this check; becomes `kept` at [`ParseCache::finish`].
    fresh: HashMap<ChunkKey, (usize, Parsed)>,
    /// Chunks taken from the cache since it was made (for tests and benchmarks).
    pub reused: usize,
    /// Chunks parsed because the cache did not hold them.
    pub parsed: usize,
}

impl ParseCache {
    /// An empty cache.
    pub fn new() -> Self {
        ParseCache::default()
    }

    fn key(file: FileId, text: &str, chunk: &Chunk) -> Option<ChunkKey> {
        Some(ChunkKey {
            file,
            text: text.get(chunk.start..chunk.end)?.to_string(),
            truncated: chunk.truncated,
            too_deep_at: chunk.too_deep_at.map(|at| at.saturating_sub(chunk.start)),
        })
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
        let keys: Vec<Option<ChunkKey>> = chunks.iter().map(|c| Self::key(file, text, c)).collect();
        let mut found: Vec<Option<Parsed>> = Vec::with_capacity(chunks.len());
        let mut missing: Vec<&'c Chunk> = Vec::new();
        for (chunk, key) in chunks.iter().zip(&keys) {
            let cached = key
                .as_ref()
                .and_then(|k| self.fresh.get(k).or_else(|| self.kept.get(k)))
                .map(|(start, parsed)| (*start, parsed.clone()));
            match cached {
                Some((start, mut parsed)) => {
                    let by = i64::try_from(chunk.start).unwrap_or(0) - i64::try_from(start).unwrap_or(0);
                    if by != 0 {
                        parsed.module.items.shift(by);
                        parsed.diagnostics.shift(by);
                        parsed.broken.shift(by);
                    }
                    found.push(Some(parsed));
                }
                None => {
                    missing.push(chunk);
                    found.push(None);
                }
            }
        }
        self.reused += chunks.len() - missing.len();
        self.parsed += missing.len();
        let mut parsed_now = parse_missing(&missing).into_iter();
        let mut out = Vec::with_capacity(chunks.len());
        for ((chunk, key), cached) in chunks.iter().zip(keys).zip(found) {
            let Some(parsed) = cached.or_else(|| parsed_now.next()) else {
                continue;
            };
            if let Some(key) = key {
                self.fresh.insert(key, (chunk.start, parsed.clone()));
            }
            out.push(parsed);
        }
        out
    }

    /// Ends a check: what it parsed is kept for the next one, and the rest is dropped.
    pub fn finish(&mut self) {
        self.kept = std::mem::take(&mut self.fresh);
    }
}
