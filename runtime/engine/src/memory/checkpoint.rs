//! How the store packs a lent checkpoint (`Store::commit_checkpoint`: every step of a run): into
//! the bytes `rmp_serde::encode::write_named` writes for it, except that each message the
//! checkpoint it replaces already held is copied from that checkpoint's bytes instead of being
//! encoded again: the thread's conversation, and while a fork runs, each branch's messages at any
//! depth (the thread holds them all until the join, and a fork's lanes commit many times). A run
//! only adds messages, so a step encodes its new messages and copies the others: a run's
//! messages are encoded about once, where they were encoded again at every step (a cost that grew
//! with the square of a conversation's length, and of a map's width).
//!
//! A message is copied when the replaced checkpoint has one with the same id at the same place in
//! the same list (the conversation, or one branch's messages, found by the branch's path), or,
//! for the conversation, when it is the next one with that id among the fork branches' messages
//! in the order a join moves them into it (fork order, then each branch's order): a list only
//! grows (a thread's history is never rewritten, `run::write_rules`), the engine gives every
//! message an id before it enters a list, and order tells apart messages a client sent under one
//! id.
//!
//! While the thread's own fork runs, each commit of its hub moves a few of its branches: the
//! engine says which (`Store::commit_fork_step`), and every other branch, with its progress
//! entry, is copied whole from the replaced checkpoint, after a check that the bytes at its place
//! are that branch's.
//!
//! Debug builds check these promises: they encode each copied message again and refuse the commit
//! ([`StoreError::Failed`]) when the bytes differ, so a message changed under its id fails the
//! engine's tests instead of going unnoticed, and they compare the whole packed checkpoint with
//! what `write_named` writes for it, so this hand-written layout cannot drift from the types' and
//! a hint that hides a moved branch fails every fork test that commits it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Range;
use std::sync::Arc;

use serde::Serialize;

use crate::ports::StoreError;
use crate::thread::{Branch, BranchRun, CheckpointFormat, ForkProgress, RunProgress, ThreadRecord};
use crate::wire::Message;

/// Where one message of a packed checkpoint lies in its bytes.
#[derive(Debug, Clone)]
pub(super) struct Span {
    /// The message's id (shared with the spans of the checkpoints that copy it).
    id: Arc<str>,
    range: Range<usize>,
}

impl Span {
    /// Whether this span's message was copied from `held`'s (they share its id).
    #[cfg(test)]
    pub(super) fn copied_from(&self, held: &Self) -> bool {
        Arc::ptr_eq(&self.id, &held.id)
    }

    /// Its message's id.
    #[cfg(test)]
    pub(super) fn id(&self) -> &str {
        &self.id
    }

    /// Where its message lies.
    #[cfg(test)]
    pub(super) fn range(&self) -> Range<usize> {
        self.range.clone()
    }
}

/// Where a packed checkpoint's messages lie: the conversation's, in order, and each fork
/// branch's, in order, by the branch's key (its path, below the paths of the branches it runs
/// in, at any depth).
#[derive(Debug, Default)]
pub(super) struct MessageSpans {
    context: Vec<Span>,
    branches: HashMap<String, Vec<Span>>,
    /// Where each branch of the thread's own fork lies, in fork order.
    fork_branches: Vec<Range<usize>>,
    /// Where each entry of the run's progress (`RunProgress::branches`: its key, then its value)
    /// lies, in key order.
    progress: Vec<Range<usize>>,
}

impl MessageSpans {
    /// The conversation's spans.
    #[cfg(test)]
    pub(super) fn context(&self) -> &[Span] {
        &self.context
    }

    /// The spans of the messages of the branch at `path` (outermost first), if it has any.
    #[cfg(test)]
    pub(super) fn branch(&self, path: &[&str]) -> Option<&[Span]> {
        let key = path
            .iter()
            .fold(None::<String>, |key, part| Some(branch_key(key.as_deref(), part)))?;
        self.branches.get(&key).map(Vec::as_slice)
    }
}

/// A checkpoint's message spans, shared by the store's handles to it.
pub(super) type Spans = Arc<MessageSpans>;

/// A packed checkpoint whose messages may be copied: its bytes and its messages' spans, and
/// when the engine said so, which branches of the thread's own fork moved since it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Previous<'p> {
    pub(super) bytes: &'p [u8],
    pub(super) spans: &'p MessageSpans,
    /// `Some`: the checkpoint packed differs from this one only in its own fields and in the
    /// branches of the thread's fork (and their progress entries) at these paths; every other
    /// branch is the same, in the same place (`Store::commit_fork_step`). Those are copied whole.
    pub(super) moved: Option<&'p BTreeSet<String>>,
}

/// How many fields a [`ThreadRecord`] always writes (`stopped_run` is written only when set).
const FIELDS: u32 = 16;

/// Packs `thread` as `write_named` does into `bytes`, copying the messages `previous` holds (see
/// the module docs); `what` names it in errors. Returns the spans of its messages.
pub(super) fn pack(
    bytes: &mut Vec<u8>,
    thread: &ThreadRecord,
    previous: Option<Previous<'_>>,
    what: &dyn std::fmt::Display,
) -> Result<MessageSpans, StoreError> {
    let failed = |error: String| StoreError::Failed(format!("encoding {what}: {error}"));
    let start = bytes.len();
    // As many branches as the replaced checkpoint's, most often: the map is not grown at every
    // commit.
    let spans = MessageSpans {
        branches: HashMap::with_capacity(previous.map_or(0, |previous| previous.spans.branches.len())),
        ..MessageSpans::default()
    };
    let mut packer = Packer {
        bytes,
        previous,
        spans,
        merged: None,
    };
    packer.record(thread).map_err(failed)?;
    let Packer { bytes, spans, .. } = packer;
    if cfg!(debug_assertions) {
        same_layout(thread, bytes.get(start..).unwrap_or_default()).map_err(failed)?;
    }
    Ok(spans)
}

/// One packing: where it writes, what it may copy, the spans it has found.
struct Packer<'b, 'p> {
    bytes: &'b mut Vec<u8>,
    previous: Option<Previous<'p>>,
    spans: MessageSpans,
    /// The replaced checkpoint's branch messages in the order a join moves them, and how many
    /// of them the conversation has met, once asked for ([`Packer::merged_message`]).
    merged: Option<(Vec<&'p Span>, usize)>,
}

impl<'p> Packer<'_, 'p> {
    /// The whole record.
    fn record(&mut self, thread: &ThreadRecord) -> Result<(), String> {
        // Every field, so that a field added to the record fails to build here until it is packed.
        let ThreadRecord {
            format: _,
            thread_id,
            artifact_id,
            graph,
            owner,
            version,
            created_at,
            updated_at,
            state,
            context,
            execution,
            pending,
            run,
            resume_at,
            model_cursors,
            substitutions,
            stopped_run,
        } = thread;
        self.map(FIELDS.saturating_add(u32::from(stopped_run.is_some())))?;
        // Always the current format, as `CheckpointFormat`'s `Serialize` writes it.
        self.field("format", &CheckpointFormat::CURRENT)?;
        self.field("thread_id", thread_id)?;
        self.field("artifact_id", artifact_id)?;
        self.field("graph", graph)?;
        self.field("owner", owner)?;
        self.field("version", version)?;
        self.field("created_at", created_at)?;
        self.field("updated_at", updated_at)?;
        self.field("state", state)?;
        self.key("context")?;
        self.spans.context = self.messages(context, None)?;
        self.field("execution", execution)?;
        self.field("pending", pending)?;
        self.key("run")?;
        match run {
            Some(run) => self.run(run)?,
            None => rmp::encode::write_nil(self.bytes).map_err(|error| error.to_string())?,
        }
        self.field("resume_at", resume_at)?;
        self.field("model_cursors", model_cursors)?;
        self.field("substitutions", substitutions)?;
        // A stopped run's messages are encoded whole: the thread is at rest while it keeps one.
        if let Some(stopped_run) = stopped_run {
            self.field("stopped_run", stopped_run)?;
        }
        Ok(())
    }

    /// The run's progress, its fork (if one runs) packed by [`Packer::fork`].
    fn run(&mut self, run: &RunProgress) -> Result<(), String> {
        let RunProgress {
            run_id,
            started_by,
            recursion_limit,
            input_text,
            branches,
            fork,
        } = run;
        self.map(5_u32.saturating_add(u32::from(fork.is_some())))?;
        self.field("run_id", run_id)?;
        self.field("started_by", started_by)?;
        self.field("recursion_limit", recursion_limit)?;
        self.field("input_text", input_text)?;
        self.progress(branches)?;
        if let Some(fork) = fork {
            self.key("fork")?;
            self.fork(fork, None)?;
        }
        Ok(())
    }

    /// The run's progress by branch (`RunProgress::branches`), each entry an unmoved branch's
    /// copied (see [`Previous::moved`]).
    fn progress(&mut self, branches: &BTreeMap<String, Branch>) -> Result<(), String> {
        self.key("branches")?;
        let length = u32::try_from(branches.len()).map_err(|_| "a run has too many branches".to_owned())?;
        rmp::encode::write_map_len(self.bytes, length).map_err(|error| error.to_string())?;
        let mut ranges = Vec::with_capacity(branches.len());
        for (index, (path, branch)) in branches.iter().enumerate() {
            let start = self.bytes.len();
            let held = self.previous.and_then(|previous| previous.spans.progress.get(index));
            if self.unmoved(path, held, holds_str).is_none() {
                rmp::encode::write_str(self.bytes, path).map_err(|error| error.to_string())?;
                rmp_serde::encode::write_named(self.bytes, branch).map_err(|error| error.to_string())?;
            }
            ranges.push(start..self.bytes.len());
        }
        self.spans.progress = ranges;
        Ok(())
    }

    /// Copies the unmoved branch (or progress entry) at `path` from where the replaced checkpoint
    /// holds it (`held`), when the engine said it did not move ([`Previous::moved`]) and those
    /// bytes are that branch's (`names`: they name `path` where a branch, or an entry, does).
    /// Returns the range copied from.
    fn unmoved(
        &mut self,
        path: &str,
        held: Option<&Range<usize>>,
        names: fn(&[u8], &str) -> bool,
    ) -> Option<Range<usize>> {
        let previous = self.previous?;
        if previous.moved?.contains(path) {
            return None;
        }
        let range = held?;
        let bytes = previous.bytes.get(range.clone())?;
        if !names(bytes, path) {
            return None;
        }
        self.bytes.extend_from_slice(bytes);
        Some(range.clone())
    }

    /// A fork in progress, whose branches run inside the branch keyed `within` (`None`: the
    /// thread's own fork).
    fn fork(&mut self, fork: &ForkProgress, within: Option<&str>) -> Result<(), String> {
        let ForkProgress {
            from,
            join,
            width,
            branches,
            subgraph,
            agent_call,
        } = fork;
        let optional = u32::from(subgraph.is_some()).saturating_add(u32::from(agent_call.is_some()));
        self.map(4_u32.saturating_add(optional))?;
        self.field("from", from)?;
        self.field("join", join)?;
        self.field("width", width)?;
        self.key("branches")?;
        let length = u32::try_from(branches.len()).map_err(|_| "a fork has too many branches".to_owned())?;
        rmp::encode::write_array_len(self.bytes, length).map_err(|error| error.to_string())?;
        if within.is_some() {
            for branch in branches {
                self.branch(branch, within)?;
            }
        } else {
            let mut ranges = Vec::with_capacity(branches.len());
            for (index, branch) in branches.iter().enumerate() {
                let start = self.bytes.len();
                if !self.unmoved_branch(branch, index, start)? {
                    self.branch(branch, None)?;
                }
                ranges.push(start..self.bytes.len());
            }
            self.spans.fork_branches = ranges;
        }
        if let Some(subgraph) = subgraph {
            self.field("subgraph", subgraph)?;
        }
        if let Some(agent_call) = agent_call {
            self.field("agent_call", agent_call)?;
        }
        Ok(())
    }

    /// Copies `branch`, the `index`th of the thread's own fork, whole from the replaced
    /// checkpoint if it did not move and runs no fork of its own (see [`Previous::moved`]), to
    /// `start`, with its messages' spans moved along. Whether it did.
    fn unmoved_branch(&mut self, branch: &BranchRun, index: usize, start: usize) -> Result<bool, String> {
        if branch.inner.is_some() {
            return Ok(false);
        }
        let Some(previous) = self.previous else {
            return Ok(false);
        };
        let held = previous.spans.fork_branches.get(index);
        let Some(from) = self.unmoved(&branch.path, held, names_branch) else {
            return Ok(false);
        };
        if let Some(spans) = previous.spans.branches.get(&branch.path) {
            let moved = spans
                .iter()
                .map(|span| {
                    let offset = span.range.start.checked_sub(from.start)?;
                    let at = start.checked_add(offset)?;
                    Some(Span {
                        id: Arc::clone(&span.id),
                        range: at..at.checked_add(span.range.len())?,
                    })
                })
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| "a copied branch's messages lie outside it".to_owned())?;
            self.spans.branches.insert(branch.path.clone(), moved);
        }
        Ok(true)
    }

    /// One branch of a fork, its messages copied where the replaced checkpoint's same branch
    /// holds them, and its own fork (if one runs) below it.
    fn branch(&mut self, branch: &BranchRun, within: Option<&str>) -> Result<(), String> {
        let BranchRun {
            path,
            state,
            messages,
            pending,
            model_cursors,
            status,
            inner,
        } = branch;
        let key = branch_key(within, path);
        self.map(6_u32.saturating_add(u32::from(inner.is_some())))?;
        self.field("path", path)?;
        self.field("state", state)?;
        self.key("messages")?;
        let spans = self.messages(messages, Some(&key))?;
        if !spans.is_empty() {
            self.spans.branches.insert(key.clone(), spans);
        }
        self.field("pending", pending)?;
        self.field("model_cursors", model_cursors)?;
        self.field("status", status)?;
        if let Some(inner) = inner {
            self.key("inner")?;
            self.map(2)?;
            self.key("fork")?;
            self.fork(&inner.fork, Some(&key))?;
            self.field("branches", &inner.branches)?;
        }
        Ok(())
    }

    /// A list of messages (the conversation, or the messages of the branch keyed `branch`): each
    /// copied from the replaced checkpoint's same list where it holds it, else encoded.
    fn messages(&mut self, messages: &[Arc<Message>], branch: Option<&str>) -> Result<Vec<Span>, String> {
        let length = u32::try_from(messages.len()).map_err(|_| "a list of messages is too long".to_owned())?;
        rmp::encode::write_array_len(self.bytes, length).map_err(|error| error.to_string())?;
        let held: &[Span] = match (self.previous, branch) {
            (None, _) => &[],
            (Some(previous), None) => &previous.spans.context,
            (Some(previous), Some(key)) => previous.spans.branches.get(key).map_or(&[], Vec::as_slice),
        };
        let bytes_held = self.previous.map_or(&[][..], |previous| previous.bytes);
        let mut spans = Vec::with_capacity(messages.len());
        for (index, message) in messages.iter().enumerate() {
            let start = self.bytes.len();
            let same_place = held
                .get(index)
                .filter(|span| !message.message_id.is_empty() && *span.id == *message.message_id);
            // The conversation after a join: the branches' messages, moved into it.
            let merged = || match branch {
                None if !message.message_id.is_empty() => self.merged_message(&message.message_id),
                _ => None,
            };
            let copied = same_place
                .or_else(merged)
                .and_then(|span| Some((Arc::clone(&span.id), bytes_held.get(span.range.clone())?)));
            let id = match copied {
                Some((id, packed)) => {
                    self.bytes.extend_from_slice(packed);
                    if cfg!(debug_assertions) {
                        same_as_encoded(message, packed)?;
                    }
                    id
                }
                None => {
                    rmp_serde::encode::write_named(self.bytes, message).map_err(|error| error.to_string())?;
                    Arc::from(message.message_id.as_str())
                }
            };
            spans.push(Span {
                id,
                range: start..self.bytes.len(),
            });
        }
        Ok(spans)
    }

    /// The span of the next message with id `id` a join moved into the conversation: the
    /// replaced checkpoint's fork branches' messages, in fork order and each branch's order (as
    /// the join moves them), met in that order. The first one with this id after the last one
    /// met is taken: the order makes it this message even when a client gave two messages one id
    /// (an id is kept as the client sent it), which a lookup by id alone would confuse.
    fn merged_message(&mut self, id: &str) -> Option<&'p Span> {
        let previous = self.previous?;
        if previous.spans.fork_branches.is_empty() {
            return None;
        }
        let (order, next) = self.merged.get_or_insert_with(|| {
            let order = previous
                .spans
                .fork_branches
                .iter()
                .filter_map(|range| branch_path(previous.bytes.get(range.clone())?))
                .filter_map(|path| previous.spans.branches.get(path))
                .flatten()
                .collect();
            (order, 0)
        });
        let found = order.get(*next..)?.iter().position(|span| *span.id == *id)?;
        let at = next.checked_add(found)?;
        *next = at.checked_add(1)?;
        order.get(at).copied()
    }

    /// A struct's map header, as `write_named` writes one with `fields` fields.
    fn map(&mut self, fields: u32) -> Result<(), String> {
        rmp::encode::write_map_len(self.bytes, fields)
            .map(drop)
            .map_err(|error| error.to_string())
    }

    /// A struct's field name, as `write_named` writes it.
    fn key(&mut self, name: &str) -> Result<(), String> {
        rmp::encode::write_str(self.bytes, name).map_err(|error| error.to_string())
    }

    /// A field: its name, then its value.
    fn field<T: Serialize + ?Sized>(&mut self, name: &str, value: &T) -> Result<(), String> {
        self.key(name)?;
        rmp_serde::encode::write_named(self.bytes, value).map_err(|error| error.to_string())
    }
}

/// The key of the branch at `path` of a fork that runs inside the branch keyed `within`. Paths
/// are names and indices (`summarise[2]`), never the unit separator, so keys are unique.
fn branch_key(within: Option<&str>, path: &str) -> String {
    match within {
        None => path.to_owned(),
        Some(within) => format!("{within}\u{1f}{path}"),
    }
}

/// Whether `bytes` begin with `text` as `write_str` writes it.
fn holds_str(bytes: &[u8], text: &str) -> bool {
    after_str(bytes, text).is_some()
}

/// Whether `bytes` begin with a packed [`BranchRun`] at `path`: a map whose first field is its
/// path.
fn names_branch(bytes: &[u8], path: &str) -> bool {
    let mut reader = bytes;
    rmp::decode::read_map_len(&mut reader).is_ok()
        && after_str(reader, "path").is_some_and(|rest| holds_str(rest, path))
}

/// The path of the packed [`BranchRun`] `bytes` begin with.
fn branch_path(bytes: &[u8]) -> Option<&str> {
    let mut reader = bytes;
    rmp::decode::read_map_len(&mut reader).ok()?;
    let mut reader = after_str(reader, "path")?;
    let length = usize::try_from(rmp::decode::read_str_len(&mut reader).ok()?).ok()?;
    std::str::from_utf8(reader.get(..length)?).ok()
}

/// The bytes after `text`, if `bytes` begin with it as `write_str` writes it.
fn after_str<'b>(bytes: &'b [u8], text: &str) -> Option<&'b [u8]> {
    let mut reader = bytes;
    let length = usize::try_from(rmp::decode::read_str_len(&mut reader).ok()?).ok()?;
    let (held, rest) = reader.split_at_checked(length)?;
    (held == text.as_bytes()).then_some(rest)
}

/// Debug builds: `packed`, copied for `message`, is what `message` encodes to.
fn same_as_encoded(message: &Message, packed: &[u8]) -> Result<(), String> {
    let encoded = rmp_serde::to_vec_named(message).map_err(|error| error.to_string())?;
    if encoded == packed {
        return Ok(());
    }
    Err(format!(
        "message '{}' changed under its id (a thread's history is never rewritten)",
        message.message_id
    ))
}

/// Debug builds: `packed` is what `write_named` writes for `thread`, byte for byte.
fn same_layout(thread: &ThreadRecord, packed: &[u8]) -> Result<(), String> {
    let encoded = rmp_serde::to_vec_named(thread).map_err(|error| error.to_string())?;
    if encoded == packed {
        return Ok(());
    }
    Err("the packed checkpoint differs from what `write_named` writes for it (see memory/checkpoint.rs)".to_owned())
}
