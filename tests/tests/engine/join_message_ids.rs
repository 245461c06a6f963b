//! A join moves its branches' messages into the conversation, and the in-memory store copies
//! their packed bytes instead of encoding them again (`memory::checkpoint`). A client's messages
//! keep the ids it gave them: two messages of an answer under one id, each different, are stored
//! as sent after the join (a copy by id alone stored one of them twice; found by review).

use serde_json::json;
use tenx_engine::ports::Store;
use tenx_engine::testing::FakeTools;
use tenx_engine::wire::{ExecutionStatus, Message, Role};
use tenx_engine::{ResumeAnswer, RunRequest};

use crate::harness::{Host, Models, dev, user};

const ASK_IN_A_BRANCH: &str = r#"import std.approval.yes_no

model m {
  provider = scripted
  turns    = [{ text: "Taken." }, { text: "Noted." }, { text: "Reported." }]
}

agent intake {
  model  = m
  prompt = "Take the request."
}

agent side {
  model  = m
  prompt = "Note the request."
}

agent report {
  model  = m
  prompt = "Report."
}

interrupt check {
  message   = "Go on?"
  response  = yes_no
  on_reject = "Not gone on."
}

graph asks {
  entry = intake
  nodes = [intake, check, side, report]

  parallel intake {
    branches = [check, side]
    join     = report
  }
  check  -> report
  side   -> report
  report -> END
}
"#;

#[tokio::test]
async fn an_answers_messages_under_one_id_are_stored_as_sent_after_the_join() {
    let host = Host::new(ASK_IN_A_BRANCH, FakeTools::new(), Models::Scripted, dev());
    let paused = host
        .run(RunRequest {
            thread_id: Some("t1".into()),
            messages: vec![user("Go.")],
            ..RunRequest::default()
        })
        .await
        .unwrap();
    assert_eq!(paused.thread.execution.status, ExecutionStatus::InterruptedBefore);
    let id = host.open_interrupt("t1").await;
    let done = host
        .run(RunRequest {
            thread_id: Some("t1".into()),
            resume: Some(ResumeAnswer {
                value: json!({"approved": true}),
                interrupt_id: Some(id),
                note: None,
            }),
            messages: vec![
                Message::text("client_id", Role::User, "first", 1.0),
                Message::text("client_id", Role::User, "second", 1.0),
            ],
            ..RunRequest::default()
        })
        .await;
    let done = done.unwrap();
    assert_eq!(done.thread.execution.status, ExecutionStatus::Completed);
    let stored = host.store.load("t1").await.unwrap().unwrap();
    let sent: Vec<String> = stored
        .context
        .iter()
        .filter(|message| message.message_id == "client_id")
        .map(|message| message.text_content())
        .collect();
    assert_eq!(sent, ["first", "second"], "{:#?}", stored.context);
}
