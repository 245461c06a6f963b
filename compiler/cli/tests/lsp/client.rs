//! A language client for the tests: starts the real `tenxc lsp`, frames JSON-RPC messages with
//! `Content-Length` headers as an editor does, and waits for answers and notifications.

#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed step should stop the test; not every test uses every helper"
)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

/// How long any answer may take (a debug build on a loaded machine).
const PATIENCE: Duration = Duration::from_secs(120);

/// A running server and its messages.
pub struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    incoming: Receiver<Value>,
    next_id: i64,
    /// Notifications received and not yet taken.
    pub notifications: Vec<Value>,
    /// What `initialize` answered.
    pub initialized: Value,
}

/// The `file://` URI of a path.
pub fn uri(path: &Path) -> String {
    url::Url::from_file_path(path.canonicalize().unwrap_or_else(|_| path.to_path_buf()))
        .unwrap()
        .to_string()
}

fn read_message(reader: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(value) = line.strip_prefix("Content-Length: ") {
            length = value.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

impl Client {
    /// Starts `tenxc lsp` with `folder` as the workspace; `utf8` offers UTF-8 columns.
    pub fn start(folder: &Path, utf8: bool) -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tenxc"))
            .arg("lsp")
            .current_dir(folder)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, incoming) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(message) = read_message(&mut reader) {
                if send.send(message).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut client = Client {
            child,
            stdin,
            incoming,
            next_id: 0,
            notifications: Vec::new(),
            initialized: Value::Null,
        };
        let encodings = if utf8 {
            json!(["utf-8", "utf-16"])
        } else {
            json!(["utf-16"])
        };
        let answer = client.request(
            "initialize",
            json!({
                "processId": null,
                "capabilities": { "general": { "positionEncodings": encodings } },
                "workspaceFolders": [{ "uri": uri(folder), "name": "test" }],
            }),
        );
        client.initialized = answer["result"].clone();
        client.notify("initialized", json!({}));
        client
    }

    /// Writes one message.
    pub fn send(&mut self, message: &Value) {
        let body = serde_json::to_vec(message).unwrap();
        let stdin = self.stdin.as_mut().unwrap();
        write!(stdin, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
        stdin.write_all(&body).unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// Sends a request and waits for its response (the whole message, `result` or `error`).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        self.wait(|m| m.get("id") == Some(&json!(id)) && m.get("method").is_none())
    }

    /// The result of a request, which must succeed.
    pub fn result(&mut self, method: &str, params: Value) -> Value {
        let answer = self.request(method, params);
        assert!(answer.get("error").is_none(), "{method} failed: {answer}");
        answer["result"].clone()
    }

    /// Waits for the first message that `wanted` accepts; notifications passed on the way are
    /// kept.
    fn wait(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        if let Some(at) = self.notifications.iter().position(&wanted) {
            return self.notifications.remove(at);
        }
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.incoming.recv_timeout(left) {
                Ok(message) if wanted(&message) => return message,
                Ok(message) => self.notifications.push(message),
                Err(RecvTimeoutError::Timeout) => {
                    panic!("no awaited message in {PATIENCE:?}; got {:?}", self.notifications)
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("the server closed its output; got {:?}", self.notifications)
                }
            }
        }
    }

    /// Waits for the diagnostics published for `uri` (at `version`, when given).
    pub fn diagnostics(&mut self, uri: &str, version: Option<i64>) -> Vec<Value> {
        let message = self.wait(|m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && version.is_none_or(|v| m["params"]["version"] == v)
        });
        message["params"]["diagnostics"].as_array().cloned().unwrap_or_default()
    }

    /// Waits for a notification of `method`.
    pub fn notification(&mut self, method: &str) -> Value {
        self.wait(|m| m["method"] == method)
    }

    /// Opens a document.
    pub fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "tenx", "version": 1, "text": text } }),
        );
    }

    /// Replaces a document's text.
    pub fn change(&mut self, uri: &str, version: i64, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "text": text }] }),
        );
    }

    /// Sends incremental changes: each `(range, text)` replaces its range of the text the one
    /// before left, as editors send them.
    pub fn edit(&mut self, uri: &str, version: i64, changes: &[(Value, &str)]) {
        let changes: Vec<Value> = changes
            .iter()
            .map(|(range, text)| json!({ "range": range, "text": text }))
            .collect();
        self.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": changes }),
        );
    }

    /// `shutdown`, then `exit`; the server's exit status.
    pub fn shutdown(mut self) -> ExitStatus {
        let answer = self.request("shutdown", Value::Null);
        assert!(answer.get("error").is_none(), "{answer}");
        self.notify("exit", Value::Null);
        drop(self.stdin.take());
        self.child.wait().unwrap()
    }
}

/// The position (`line`, `character`) of the `nth` `needle` in `text`, plus `shift` bytes
/// (ASCII text: bytes are columns in either encoding).
pub fn position(text: &str, needle: &str, nth: usize, shift: usize) -> Value {
    let offset = text.match_indices(needle).nth(nth).unwrap().0 + shift;
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let character = offset - before.rfind('\n').map_or(0, |i| i + 1);
    json!({ "line": line, "character": character })
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
