//! The in-memory store's packing of a fork in progress: each branch's messages copied at every
//! depth, a fork's unmoved branches copied whole on the engine's hint
//! (`Store::commit_fork_step`), and a join's conversation copying the branches' messages.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::json;

use super::tests::{running_thread, save};
use super::*;
use crate::thread::{Branch, BranchRun, ForkProgress};
use crate::wire::{Message, Role};

/// `running_thread` forked: branches `a` and `b` of a fork that calls an agent, `b` running a
/// subgraph of its own with one branch `inner`; each branch holds `messages` messages.
fn forked_thread(id: &str, messages: usize) -> ThreadRecord {
    use crate::thread::{AgentCallProgress, BranchStatus, InnerFork};

    let branch_messages = |path: &str| -> Vec<Arc<Message>> {
        (0..messages)
            .map(|index| {
                Message::text(
                    format!("msg_{path}_{index}"),
                    Role::Assistant,
                    format!("{path} {index}"),
                    2.5,
                )
            })
            .map(Arc::new)
            .collect()
    };
    let mut state = serde_json::Map::new();
    state.insert("topic".into(), json!("rust"));
    let inner = BranchRun::starting("inner".into(), state.clone(), branch_messages("inner"), BTreeMap::new());
    let mut b = BranchRun::starting("b".into(), state.clone(), branch_messages("b"), BTreeMap::new());
    b.inner = Some(Box::new(InnerFork {
        fork: ForkProgress {
            from: "sub".into(),
            join: "END".into(),
            width: 1,
            branches: vec![inner],
            subgraph: Some("research".into()),
            agent_call: None,
        },
        branches: BTreeMap::from([("inner".to_owned(), Branch::default())]),
    }));
    let mut a = BranchRun::starting("a".into(), state, branch_messages("a"), BTreeMap::new());
    a.status = BranchStatus::Failed {
        code: "TOOL_001".into(),
        message: "«no»".into(),
    };
    let mut thread = running_thread(id, 1);
    if let Some(run) = thread.run.as_mut() {
        run.fork = Some(ForkProgress {
            from: "plan".into(),
            join: "write".into(),
            width: 2,
            branches: vec![a, b],
            subgraph: None,
            agent_call: Some(AgentCallProgress {
                call_id: "call_9".into(),
                tool_name: "ask_team".into(),
                arguments: "{}".into(),
                agent: "team".into(),
            }),
        });
    }
    thread
}

#[test]
fn a_fork_in_progress_packs_to_the_bytes_write_named_writes() {
    for messages in [0, 3] {
        let thread = forked_thread("t", messages);
        let mut bytes = Vec::new();
        let spans = checkpoint::pack(&mut bytes, &thread, None, &"thread").unwrap();
        assert_eq!(bytes, rmp_serde::to_vec_named(&thread).unwrap());
        for path in [&["a"][..], &["b"], &["b", "inner"]] {
            assert_eq!(spans.branch(path).map_or(0, <[_]>::len), messages, "{path:?}");
        }
    }
}

#[test]
fn a_step_copies_each_branchs_messages_at_every_depth() {
    let before = forked_thread("t", 2);
    let mut held = Vec::new();
    let spans = checkpoint::pack(&mut held, &before, None, &"thread").unwrap();
    let previous = replaced(&held, &spans, None);
    // The next step: `b`'s inner branch adds a message, `a` and `b` add none, and the fork's
    // branches change places (a branch is found by its path, not its place).
    let mut after = before.clone();
    after.version += 1;
    let fork = after.run.as_mut().and_then(|run| run.fork.as_mut()).unwrap();
    fork.branches.reverse();
    let inner = &mut fork.branches[0].inner.as_mut().unwrap().fork.branches[0];
    inner
        .messages
        .push(Message::text("msg_inner_new", Role::Tool, "{\"ok\": true}", 3.0).into());
    let mut bytes = Vec::new();
    let copied = checkpoint::pack(&mut bytes, &after, Some(previous), &"thread").unwrap();
    assert_eq!(bytes, rmp_serde::to_vec_named(&after).unwrap());
    let shared = |path: &[&str]| -> Vec<bool> {
        let held = spans.branch(path).unwrap_or_default();
        copied
            .branch(path)
            .unwrap()
            .iter()
            .enumerate()
            .map(|(index, span)| held.get(index).is_some_and(|held| span.copied_from(held)))
            .collect()
    };
    assert_eq!(shared(&["a"]), [true, true]);
    assert_eq!(shared(&["b"]), [true, true]);
    assert_eq!(shared(&["b", "inner"]), [true, true, false]);
    assert_eq!(copied.context().len(), after.context.len());

    // A branch message changed under its id is refused in debug builds, as the conversation's.
    let mut changed = before.clone();
    let fork = changed.run.as_mut().and_then(|run| run.fork.as_mut()).unwrap();
    Arc::make_mut(&mut fork.branches[0].messages[1]).timestamp = 9.0;
    let outcome = checkpoint::pack(&mut Vec::new(), &changed, Some(previous), &"thread 't'");
    if cfg!(debug_assertions) {
        let Err(StoreError::Failed(message)) = outcome else {
            panic!("{outcome:?}");
        };
        assert!(message.contains("'msg_a_1' changed under its id"), "{message}");
    }
}

#[tokio::test]
async fn the_steps_of_a_fork_read_back_as_committed() {
    let store = MemoryStore::new();
    let mut thread = forked_thread("t", 0);
    thread.version = 1;
    store
        .commit_checkpoint(&thread, save(thread.clone(), None))
        .await
        .unwrap();
    for step in 1..=3 {
        thread = forked_thread("t", step);
        thread.version = u64::try_from(step).unwrap() + 1;
        let commit = save(thread.clone(), Some(thread.version - 1));
        store.commit_checkpoint(&thread, commit).await.unwrap();
        assert_eq!(store.load("t").await.unwrap(), Some(thread.clone()));
    }
}

/// `running_thread` with a fork of its own whose branches `a`, `b` and `c` (no fork inside) each
/// hold `messages` messages, with their progress entries.
fn three_branches(messages: usize) -> ThreadRecord {
    let mut thread = running_thread("t", 1);
    let run = thread.run.as_mut().unwrap();
    let mut branches = Vec::new();
    for path in ["a", "b", "c"] {
        let mut state = serde_json::Map::new();
        state.insert("topic".into(), json!(format!("topic {path}")));
        let messages = (0..messages)
            .map(|index| {
                Message::text(
                    format!("msg_{path}_{index}"),
                    Role::Assistant,
                    format!("{path} {index}"),
                    2.0,
                )
            })
            .map(Arc::new)
            .collect();
        let mut cursors = BTreeMap::new();
        cursors.insert(format!("{path}_model"), json!({"turn": messages_turn(path)}));
        branches.push(BranchRun::starting(path.into(), state, messages, cursors));
        let progress = Branch {
            node: path.into(),
            steps: 1,
            ..Branch::default()
        };
        run.branches.insert(path.into(), progress);
    }
    run.fork = Some(ForkProgress {
        from: "plan".into(),
        join: "write".into(),
        width: 3,
        branches,
        subgraph: None,
        agent_call: None,
    });
    thread
}

/// A scripted cursor's turn that differs by branch.
fn messages_turn(path: &str) -> usize {
    path.len() + path.bytes().map(usize::from).sum::<usize>()
}

/// The branch at `path` of `thread`'s own fork.
fn branch<'t>(thread: &'t mut ThreadRecord, path: &str) -> &'t mut BranchRun {
    let fork = thread.run.as_mut().and_then(|run| run.fork.as_mut()).unwrap();
    fork.branches.iter_mut().find(|branch| branch.path == path).unwrap()
}

/// The checkpoint packed in `held`, whose messages lie at `spans`, with the engine's hint.
fn replaced<'p>(
    held: &'p [u8],
    spans: &'p checkpoint::MessageSpans,
    moved: Option<&'p BTreeSet<String>>,
) -> checkpoint::Previous<'p> {
    checkpoint::Previous {
        bytes: held,
        spans,
        moved,
    }
}

/// `before` packed, with its spans.
fn packed(before: &ThreadRecord) -> (Vec<u8>, checkpoint::MessageSpans) {
    let mut held = Vec::new();
    let spans = checkpoint::pack(&mut held, before, None, &"thread").unwrap();
    (held, spans)
}

/// Whether each of the spans of the branch at `path` in `after` shares its message with the
/// span at the same place in `before`.
fn shared(before: &checkpoint::MessageSpans, after: &checkpoint::MessageSpans, path: &str) -> Vec<bool> {
    let held = before.branch(&[path]).unwrap_or_default();
    after
        .branch(&[path])
        .unwrap_or_default()
        .iter()
        .enumerate()
        .map(|(index, span)| held.get(index).is_some_and(|held| span.copied_from(held)))
        .collect()
}

#[test]
fn a_fork_step_copies_its_unmoved_branches_whole() {
    let before = three_branches(2);
    let (held, spans) = packed(&before);
    // The step: `b` adds a message and takes a step; `a` and `c` did not move.
    let mut after = before.clone();
    after.version += 1;
    branch(&mut after, "b")
        .messages
        .push(Message::text("msg_b_new", Role::Tool, "{\"ok\": true}", 3.0).into());
    after.run.as_mut().unwrap().branches.get_mut("b").unwrap().steps = 2;
    let moved = BTreeSet::from(["b".to_owned()]);
    let previous = replaced(&held, &spans, Some(&moved));
    let mut bytes = Vec::new();
    let copied = checkpoint::pack(&mut bytes, &after, Some(previous), &"thread").unwrap();
    assert_eq!(bytes, rmp_serde::to_vec_named(&after).unwrap());
    assert_eq!(shared(&spans, &copied, "a"), [true, true]);
    assert_eq!(shared(&spans, &copied, "b"), [true, true, false]);
    assert_eq!(shared(&spans, &copied, "c"), [true, true]);
    // The copied branches' messages are found where they now lie, so the next step copies them.
    let fork = after.run.as_ref().and_then(|run| run.fork.as_ref()).unwrap();
    for branch in &fork.branches {
        let spans = copied.branch(&[&branch.path]).unwrap();
        for (message, span) in branch.messages.iter().zip(spans) {
            assert_eq!(bytes[span.range()], rmp_serde::to_vec_named(message).unwrap()[..]);
        }
    }
    let mut next = after.clone();
    next.version += 1;
    branch(&mut next, "c").status = crate::thread::BranchStatus::Done;
    let moved = BTreeSet::from(["c".to_owned()]);
    let previous = replaced(&bytes, &copied, Some(&moved));
    let mut last = Vec::new();
    let again = checkpoint::pack(&mut last, &next, Some(previous), &"thread").unwrap();
    assert_eq!(last, rmp_serde::to_vec_named(&next).unwrap());
    assert_eq!(shared(&copied, &again, "a"), [true, true]);
    assert_eq!(shared(&copied, &again, "b"), [true, true, true]);
}

#[test]
fn a_hint_that_hides_a_moved_branch_is_caught_in_debug_builds() {
    let before = three_branches(1);
    let (held, spans) = packed(&before);
    let nothing = BTreeSet::new();
    let previous = replaced(&held, &spans, Some(&nothing));
    // `a` moved (its state, or its progress entry), but the hint says nothing did: its stale
    // bytes are copied, which debug builds refuse and release builds keep.
    let mut state_moved = before.clone();
    branch(&mut state_moved, "a").state.insert("found".into(), json!(true));
    let mut progress_moved = before.clone();
    progress_moved
        .run
        .as_mut()
        .unwrap()
        .branches
        .get_mut("a")
        .unwrap()
        .steps = 7;
    for after in [state_moved, progress_moved] {
        let mut bytes = Vec::new();
        let outcome = checkpoint::pack(&mut bytes, &after, Some(previous), &"thread 't'");
        if cfg!(debug_assertions) {
            let Err(StoreError::Failed(message)) = outcome else {
                panic!("{outcome:?}");
            };
            assert!(message.contains("differs from what `write_named` writes"), "{message}");
        } else {
            outcome.unwrap();
            assert_ne!(bytes, rmp_serde::to_vec_named(&after).unwrap());
        }
    }
}

#[test]
fn a_branch_not_where_the_hint_says_is_encoded() {
    let before = three_branches(1);
    let (held, spans) = packed(&before);
    let nothing = BTreeSet::new();
    let previous = replaced(&held, &spans, Some(&nothing));
    // The branches changed places, and one progress entry is new: the bytes at each place name
    // another branch, so each is encoded.
    let mut after = before.clone();
    after
        .run
        .as_mut()
        .and_then(|run| run.fork.as_mut())
        .unwrap()
        .branches
        .reverse();
    after
        .run
        .as_mut()
        .unwrap()
        .branches
        .insert("aa".into(), Branch::default());
    let mut bytes = Vec::new();
    checkpoint::pack(&mut bytes, &after, Some(previous), &"thread").unwrap();
    assert_eq!(bytes, rmp_serde::to_vec_named(&after).unwrap());
}

#[test]
fn a_join_copies_the_branches_messages_into_the_conversation() {
    let before = three_branches(2);
    let (held, spans) = packed(&before);
    // The join: the branches' messages move to the conversation, in branch order.
    let mut after = before.clone();
    after.version += 1;
    let run = after.run.as_mut().unwrap();
    let fork = run.fork.take().unwrap();
    for branch in fork.branches {
        run.branches.remove(&branch.path);
        after.context.extend(branch.messages);
    }
    after
        .context
        .push(Message::text("msg_write", Role::Assistant, "The report.", 4.0).into());
    let previous = replaced(&held, &spans, None);
    let mut bytes = Vec::new();
    let copied = checkpoint::pack(&mut bytes, &after, Some(previous), &"thread").unwrap();
    assert_eq!(bytes, rmp_serde::to_vec_named(&after).unwrap());
    let merged: Vec<bool> = copied
        .context()
        .iter()
        .map(|span| {
            ["a", "b", "c"]
                .iter()
                .filter_map(|path| spans.branch(&[path]))
                .flatten()
                .any(|held| span.copied_from(held))
        })
        .collect();
    let before_fork = before.context.len();
    assert_eq!(merged.len(), before_fork + 7);
    assert!(
        merged[before_fork..before_fork + 6].iter().all(|copied| *copied),
        "{merged:?}"
    );
    assert!(!merged[before_fork + 6]);
}

#[tokio::test]
async fn a_forks_steps_committed_with_hints_read_back_as_committed() {
    let store = MemoryStore::new();
    let mut thread = three_branches(0);
    thread.version = 1;
    store
        .commit_checkpoint(&thread, save(thread.clone(), None))
        .await
        .unwrap();
    for (step, path) in ["a", "c", "b", "a"].into_iter().enumerate() {
        thread.version += 1;
        branch(&mut thread, path)
            .messages
            .push(Message::text(format!("msg_{path}_{step}"), Role::Assistant, "done", 5.0).into());
        thread.run.as_mut().unwrap().branches.get_mut(path).unwrap().steps += 1;
        let moved = BTreeSet::from([path.to_owned()]);
        let commit = save(thread.clone(), Some(thread.version - 1));
        store.commit_fork_step(&thread, commit, &moved).await.unwrap();
        assert_eq!(store.load("t").await.unwrap(), Some(thread.clone()));
    }
}

/// A client's messages keep the ids it gave them (an answer's enter its branch as sent), so
/// branches may hold several messages under one id: the join's conversation copies each from its
/// own bytes, met in the order the join moves them.
#[test]
fn a_join_whose_branches_share_a_message_id_copies_each_message_as_it_is() {
    let mut before = three_branches(1);
    for (path, texts) in [("a", &["first", "second"][..]), ("b", &["from b"][..])] {
        for text in texts {
            branch(&mut before, path)
                .messages
                .push(Message::text("client_id", Role::User, *text, 1.0).into());
        }
    }
    let (held, spans) = packed(&before);
    let mut after = before.clone();
    after.version += 1;
    let run = after.run.as_mut().unwrap();
    let fork = run.fork.take().unwrap();
    for branch in fork.branches {
        run.branches.remove(&branch.path);
        after.context.extend(branch.messages);
    }
    let mut bytes = Vec::new();
    let copied = checkpoint::pack(&mut bytes, &after, Some(replaced(&held, &spans, None)), &"thread").unwrap();
    assert_eq!(bytes, rmp_serde::to_vec_named(&after).unwrap());
    let held_by_client: Vec<&checkpoint::Span> = ["a", "b"]
        .iter()
        .flat_map(|path| spans.branch(&[path]).unwrap_or_default())
        .filter(|span| span.id() == "client_id")
        .collect();
    let copied_by_client: Vec<&checkpoint::Span> = copied
        .context()
        .iter()
        .filter(|span| span.id() == "client_id")
        .collect();
    assert_eq!(copied_by_client.len(), 3);
    for (copied, held) in copied_by_client.iter().zip(&held_by_client) {
        assert!(copied.copied_from(held));
    }
}
