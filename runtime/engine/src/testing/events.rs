//! An event sink a test reads back while the engine still holds it.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::ports::{Event, EventSink};

/// Records every event. Clones share the recording: give one to the engine, keep one to read.
#[derive(Debug, Clone, Default)]
pub struct RecordingEvents {
    events: Arc<Mutex<Vec<Event>>>,
}

impl RecordingEvents {
    /// An empty recording.
    pub fn new() -> Self {
        Self::default()
    }

    fn recorded(&self) -> MutexGuard<'_, Vec<Event>> {
        self.events.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The events so far, in order.
    pub fn events(&self) -> Vec<Event> {
        self.recorded().clone()
    }

    /// The events so far, emptying the recording.
    pub fn take(&self) -> Vec<Event> {
        std::mem::take(&mut *self.recorded())
    }

    /// The kinds of the events so far (their wire tag: `run_started`, `tool_call`, …), in order.
    pub fn kinds(&self) -> Vec<String> {
        self.recorded()
            .iter()
            .map(|event| {
                serde_json::to_value(event)
                    .ok()
                    .and_then(|value| value.get("event").and_then(|kind| kind.as_str()).map(str::to_string))
                    .unwrap_or_default()
            })
            .collect()
    }
}

impl EventSink for RecordingEvents {
    fn emit(&mut self, event: Event) {
        self.recorded().push(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_one_recording() {
        let reader = RecordingEvents::new();
        let mut sink: Box<dyn EventSink> = Box::new(reader.clone());
        sink.emit(Event::NodeStarted {
            node: "support".into(),
            step: 1,
            branch: None,
        });
        sink.emit(Event::Rejected {
            violation_type: "prompt_injection".into(),
            message: "no".into(),
        });
        assert_eq!(reader.kinds(), ["node_started", "rejected"]);
        assert_eq!(
            reader.events().first(),
            Some(&Event::NodeStarted {
                node: "support".into(),
                step: 1,
                branch: None,
            })
        );
        assert_eq!(reader.take().len(), 2);
        assert!(reader.events().is_empty());
        sink.emit(Event::RunFinished { thread_id: "t".into() });
        assert_eq!(reader.kinds(), ["run_finished"]);
    }
}
