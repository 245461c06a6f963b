//! A streamed chat completion reassembled: each `data:` chunk's text delta goes to the
//! [`DeltaSink`] at once, tool-call deltas are joined by their `index` (the first one carries
//! the id and name, the next ones pieces of the arguments), the usage chunk (`choices: []`)
//! is kept, and `data: [DONE]` ends the answer. Chunks are read into borrowed structs, so a
//! piece of text without escapes is never copied before it is appended.

use std::borrow::Cow;

use serde::Deserialize;
use tenx_engine::ports::{DeltaSink, ModelError, ModelErrorKind, ModelReply};

use super::parts::{Parts, Usage};
use crate::call::Assembler;
use crate::failure::{Caller, error_identifiers};
use crate::output::OutputShape;

/// One chunk (`chat.completion.chunk`).
#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(default, borrow)]
    choices: Option<Vec<Choice<'a>>>,
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

/// One choice of a chunk.
#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(default)]
    index: u64,
    #[serde(default, borrow)]
    delta: Option<Delta<'a>>,
    #[serde(default, borrow)]
    finish_reason: Option<Cow<'a, str>>,
}

/// The delta of a choice.
#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(default, borrow)]
    content: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    refusal: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    tool_calls: Option<Vec<CallDelta<'a>>>,
}

/// A piece of a tool call.
#[derive(Deserialize)]
struct CallDelta<'a> {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default, borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    function: Option<FunctionDelta<'a>>,
}

/// A piece of a call's function.
#[derive(Deserialize)]
struct FunctionDelta<'a> {
    #[serde(default, borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    arguments: Option<Cow<'a, str>>,
}

/// Gathers a streamed answer.
#[derive(Debug, Default)]
pub struct StreamAssembler {
    parts: Parts,
    done: bool,
    /// Whether text deltas are forwarded as they come (not for a wrapped output schema, whose
    /// answer is unwrapped at the end).
    hold_text: bool,
}

impl StreamAssembler {
    /// An assembler; `output` is the agent's output shape, if any.
    pub fn new(output: Option<&OutputShape>) -> Self {
        Self {
            hold_text: output.is_some_and(|shape| shape.wrapped),
            ..Self::default()
        }
    }
}

impl Assembler for StreamAssembler {
    type Output = OutputShape;

    /// Whether `data: [DONE]` was seen.
    fn is_done(&self) -> bool {
        self.done
    }

    /// Reads one event's data.
    fn push(&mut self, caller: &Caller, data: &str, deltas: &mut dyn DeltaSink) -> Result<(), ModelError> {
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk: Chunk<'_> =
            serde_json::from_str(data).map_err(|_| caller.malformed("a stream chunk is not valid JSON"))?;
        if let Some(error) = chunk.error {
            let detail = error_identifiers(serde_json::json!({ "error": error }).to_string().as_bytes());
            return Err(caller.error(
                ModelErrorKind::Server,
                match detail {
                    Some(detail) => format!("the stream reported an error ({detail})"),
                    None => "the stream reported an error".to_owned(),
                },
            ));
        }
        if let Some(usage) = chunk.usage {
            self.parts.usage = Some(usage.to_tokens());
        }
        for choice in chunk.choices.into_iter().flatten().filter(|choice| choice.index == 0) {
            if let Some(reason) = choice.finish_reason {
                self.parts.finish_reason = Some(reason.into_owned());
            }
            let Some(delta) = choice.delta else {
                continue;
            };
            if let Some(piece) = delta.content.filter(|piece| !piece.is_empty()) {
                if !self.hold_text {
                    deltas.text(&piece);
                }
                self.parts.text.push_str(&piece);
            }
            if let Some(piece) = delta.refusal.filter(|piece| !piece.is_empty()) {
                if !self.hold_text {
                    deltas.text(&piece);
                }
                self.parts.refusal.push_str(&piece);
            }
            for (position, call) in delta.tool_calls.into_iter().flatten().enumerate() {
                let index = call
                    .index
                    .unwrap_or_else(|| u64::try_from(position).unwrap_or(u64::MAX));
                let gathered = self.parts.calls.entry(index).or_default();
                if let Some(id) = call.id.filter(|id| !id.is_empty()) {
                    gathered.id = id.into_owned();
                }
                if let Some(function) = call.function {
                    if let Some(name) = function.name.filter(|name| !name.is_empty())
                        && gathered.name.is_empty()
                    {
                        gathered.name = name.into_owned();
                    }
                    if let Some(arguments) = function.arguments {
                        gathered.arguments.push_str(&arguments);
                    }
                }
            }
        }
        Ok(())
    }

    /// The whole answer, once the stream ended. A stream that ended before any choice finished
    /// (no `finish_reason`, no `[DONE]`) was cut: a connection error.
    fn finish(
        self,
        caller: &Caller,
        output: Option<&Self::Output>,
        deltas: &mut dyn DeltaSink,
    ) -> Result<ModelReply, ModelError> {
        if !self.done && self.parts.finish_reason.is_none() {
            return Err(caller.error(
                ModelErrorKind::Connection,
                "the stream ended before the answer was complete",
            ));
        }
        self.parts.into_reply(caller, output, deltas)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller() -> Caller {
        Caller {
            provider: "openai",
            model: "llama3.1:8b".into(),
        }
    }

    struct Sink(Vec<String>);

    impl DeltaSink for Sink {
        fn text(&mut self, piece: &str) {
            self.0.push(piece.to_owned());
        }
    }

    #[test]
    fn a_whole_call_in_one_chunk_without_index_id_or_done_is_read() {
        // As Ollama streams a tool call: whole, in one chunk, and this one without index or id.
        let mut assembler = StreamAssembler::new(None);
        let mut sink = Sink(Vec::new());
        for data in [
            r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"type":"function","function":{"name":"lookup_order","arguments":"{\"order_id\":\"1042\"}"}},{"function":{"name":"ping","arguments":""}}]},"finish_reason":null}]}"#,
            r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"tool_calls"}]}"#,
        ] {
            assembler.push(&caller(), data, &mut sink).unwrap();
        }
        assert!(!assembler.is_done());
        let reply = assembler.finish(&caller(), None, &mut sink).unwrap();
        assert!(sink.0.is_empty());
        let calls: Vec<(&str, &str, &str)> = reply
            .tool_calls
            .iter()
            .map(|call| (call.id.as_str(), call.name.as_str(), call.arguments.as_str()))
            .collect();
        assert_eq!(
            calls,
            [
                ("call_0", "lookup_order", r#"{"order_id":"1042"}"#),
                ("call_1", "ping", "{}")
            ]
        );
    }

    #[test]
    fn an_error_chunk_and_a_nameless_call_fail_clearly() {
        let mut sink = Sink(Vec::new());
        let error = StreamAssembler::new(None)
            .push(
                &caller(),
                r#"{"error":{"message":"model crashed","type":"server_error","code":500}}"#,
                &mut sink,
            )
            .unwrap_err();
        assert_eq!(error.kind, ModelErrorKind::Server);
        assert_eq!(
            error.message,
            "provider `openai`, model `llama3.1:8b`: the stream reported an error (type `server_error`)"
        );
        let mut assembler = StreamAssembler::new(None);
        assembler
            .push(
                &caller(),
                r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]},"finish_reason":"tool_calls"}]}"#,
                &mut sink,
            )
            .unwrap();
        let error = assembler.finish(&caller(), None, &mut sink).unwrap_err();
        assert_eq!(
            error.message,
            "provider `openai`, model `llama3.1:8b`: malformed answer: tool call 0 has no function name"
        );
    }
}
