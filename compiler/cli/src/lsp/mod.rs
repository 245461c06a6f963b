//! `tenxc lsp`: the language server, over stdio on rust-analyzer's `lsp-server`. Files:
//! [`capabilities`] (what is offered, the position encoding agreed), [`workspace`] (documents,
//! programs, diagnostics), [`analysis`] (one checked program), [`handlers`] (requests),
//! [`convert`] (the compiler's answers in the protocol's words), [`position`], [`uri`] and
//! [`stdlib_files`].
//!
//! One thread handles the messages in order. Documents are synced incrementally (each change
//! carries the edited range only). Edits that arrive together are applied together
//! and checked once, so a burst of keystrokes costs one re-check; every request after an edit
//! is answered from the program as typed. Nothing a client sends can stop the server: a request
//! it cannot read gets an `InvalidParams` error, an unknown one `MethodNotFound`.

mod analysis;
mod capabilities;
mod convert;
mod handlers;
mod position;
mod stdlib_files;
mod uri;
mod workspace;

use handlers::{Answer, Failure};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument, DidOpenTextDocument, DidSaveTextDocument,
    Notification as _, PublishDiagnostics, ShowMessage,
};
use lsp_types::request::{
    CodeActionRequest, Completion, DocumentSymbolRequest, Formatting, GotoDefinition, HoverRequest,
    PrepareRenameRequest, References, Rename, Request as _,
};
use lsp_types::{
    DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams, MessageType,
    PublishDiagnosticsParams, ShowMessageParams,
};
use miette::{IntoDiagnostic, Result, WrapErr};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::collections::{BTreeSet, VecDeque};
use std::path::PathBuf;
use std::process::ExitCode;
use workspace::Workspace;

/// Runs the server on stdin and stdout until the client says `exit`.
pub fn run() -> Result<ExitCode> {
    let (connection, threads) = Connection::stdio();
    let (id, params) = connection
        .initialize_start()
        .into_diagnostic()
        .wrap_err("the client did not start the language server protocol")?;
    let params: lsp_types::InitializeParams = serde_json::from_value(params)
        .into_diagnostic()
        .wrap_err("the client's `initialize` request is malformed")?;
    let encoding = capabilities::encoding(&params);
    let result = lsp_types::InitializeResult {
        capabilities: capabilities::server(encoding),
        server_info: Some(lsp_types::ServerInfo {
            name: "tenxc".to_string(),
            version: Some(env!("CARGO_PKG_VERSION").to_string()),
        }),
    };
    let result = serde_json::to_value(result).into_diagnostic()?;
    connection
        .initialize_finish(id, result)
        .into_diagnostic()
        .wrap_err("the client did not finish the start-up handshake")?;
    let mut workspace = Workspace::new(capabilities::folders(&params), encoding);
    let exited = serve(&connection, &mut workspace)?;
    drop(connection);
    threads.join().into_diagnostic()?;
    // After `shutdown`, `exit` is a clean end; an `exit` without it is an error (the protocol's
    // rule), as is the client going away.
    Ok(if exited { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// Handles messages until `exit`. Returns whether `shutdown` came first.
fn serve(connection: &Connection, workspace: &mut Workspace) -> Result<bool> {
    let mut backlog: VecDeque<Message> = VecDeque::new();
    let mut shut_down = false;
    loop {
        let message = match backlog.pop_front() {
            Some(message) => message,
            None => match connection.receiver.recv() {
                Ok(message) => message,
                Err(_) => return Ok(shut_down),
            },
        };
        match message {
            Message::Request(request) => {
                if request.method == "shutdown" {
                    shut_down = true;
                    send(connection, Message::Response(Response::new_ok(request.id, ())));
                    continue;
                }
                let response = if shut_down {
                    Response::new_err(
                        request.id,
                        ErrorCode::InvalidRequest as i32,
                        "the server is shutting down".to_string(),
                    )
                } else {
                    answer(workspace, request)
                };
                send(connection, Message::Response(response));
            }
            Message::Notification(notification) => {
                if notification.method == "exit" {
                    return Ok(shut_down);
                }
                let mut changed = BTreeSet::new();
                let mut rescan = apply(workspace, notification, &mut changed, connection);
                // The edits already waiting are applied before checking once.
                while let Ok(next) = connection.receiver.try_recv() {
                    match next {
                        Message::Notification(n) if is_text_change(&n.method) => {
                            rescan |= apply(workspace, n, &mut changed, connection);
                        }
                        other => {
                            backlog.push_back(other);
                            break;
                        }
                    }
                }
                if rescan {
                    workspace.scan();
                }
                if !changed.is_empty() {
                    let publishes = workspace.refresh(&changed);
                    publish(connection, publishes);
                    for problem in workspace.new_config_errors() {
                        show(connection, MessageType::WARNING, problem);
                    }
                }
            }
            Message::Response(_) => {}
        }
    }
}

fn is_text_change(method: &str) -> bool {
    method == DidChangeTextDocument::METHOD || method == DidOpenTextDocument::METHOD
}

/// Applies a notification; records the files whose programs must be checked again. Returns
/// whether the workspace's programs must be found again (a file was saved, created or removed).
fn apply(
    workspace: &mut Workspace,
    notification: Notification,
    changed: &mut BTreeSet<PathBuf>,
    connection: &Connection,
) -> bool {
    match notification.method.as_str() {
        DidOpenTextDocument::METHOD => {
            if let Some(params) = read::<DidOpenTextDocumentParams>(notification.params)
                && let Some(path) = Workspace::path_of(&params.text_document.uri)
            {
                workspace.set_text(path.clone(), params.text_document.text, params.text_document.version);
                changed.insert(path);
            }
            false
        }
        DidChangeTextDocument::METHOD => {
            // Incremental sync: each change replaces a range of the text the one before left.
            if let Some(params) = read::<DidChangeTextDocumentParams>(notification.params)
                && let Some(path) = Workspace::path_of(&params.text_document.uri)
            {
                for change in params.content_changes {
                    if !workspace.edit(&path, change.range, change.text, params.text_document.version) {
                        show(
                            connection,
                            MessageType::ERROR,
                            format!(
                                "an edit of `{}` does not fit the text the server holds; close and reopen the file",
                                path.display()
                            ),
                        );
                        break;
                    }
                }
                changed.insert(path);
            }
            false
        }
        DidCloseTextDocument::METHOD => {
            if let Some(params) = read::<DidCloseTextDocumentParams>(notification.params)
                && let Some(path) = Workspace::path_of(&params.text_document.uri)
            {
                publish(connection, workspace.close(&path));
            }
            false
        }
        DidSaveTextDocument::METHOD | DidChangeWatchedFiles::METHOD => true,
        _ => false,
    }
}

fn read<P: DeserializeOwned>(params: serde_json::Value) -> Option<P> {
    serde_json::from_value(params).ok()
}

fn publish(connection: &Connection, publishes: Vec<PublishDiagnosticsParams>) {
    for params in publishes {
        send(
            connection,
            Message::Notification(Notification::new(PublishDiagnostics::METHOD.to_string(), params)),
        );
    }
}

fn show(connection: &Connection, typ: MessageType, message: String) {
    let params = ShowMessageParams { typ, message };
    send(
        connection,
        Message::Notification(Notification::new(ShowMessage::METHOD.to_string(), params)),
    );
}

fn send(connection: &Connection, message: Message) {
    // The client has gone: the next receive ends the loop.
    let _ = connection.sender.send(message);
}

/// Answers one request.
fn answer(workspace: &mut Workspace, request: Request) -> Response {
    let id = request.id.clone();
    match request.method.as_str() {
        HoverRequest::METHOD => respond(id, request.params, |p| handlers::hover(workspace, &p)),
        GotoDefinition::METHOD => respond(id, request.params, |p| handlers::definition(workspace, &p)),
        References::METHOD => respond(id, request.params, |p| handlers::references(workspace, &p)),
        Completion::METHOD => respond(id, request.params, |p| handlers::completion(workspace, &p)),
        PrepareRenameRequest::METHOD => respond(id, request.params, |p| handlers::prepare_rename(workspace, &p)),
        Rename::METHOD => respond(id, request.params, |p| handlers::rename(workspace, &p)),
        DocumentSymbolRequest::METHOD => respond(id, request.params, |p| handlers::document_symbols(workspace, &p)),
        Formatting::METHOD => respond(id, request.params, |p| handlers::formatting(workspace, &p)),
        CodeActionRequest::METHOD => respond(id, request.params, |p| handlers::code_actions(workspace, &p)),
        other => Response::new_err(
            id,
            ErrorCode::MethodNotFound as i32,
            format!("`{other}` is not a request this server answers"),
        ),
    }
}

fn respond<P: DeserializeOwned, R: Serialize>(
    id: lsp_server::RequestId,
    params: serde_json::Value,
    handle: impl FnOnce(P) -> Answer<R>,
) -> Response {
    let params: P = match serde_json::from_value(params) {
        Ok(params) => params,
        Err(error) => {
            return Response::new_err(
                id,
                ErrorCode::InvalidParams as i32,
                format!("the request's parameters are malformed: {error}"),
            );
        }
    };
    match handle(params) {
        Ok(result) => Response::new_ok(id, result),
        Err(Failure { code, message }) => Response::new_err(id, code, message),
    }
}
