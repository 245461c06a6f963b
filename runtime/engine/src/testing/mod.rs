//! Deterministic ports for tests: a clock the test sets ([`ManualClock`]), ids that count
//! ([`SequentialIds`], **never for production**: its interrupt ids are guessable), an event sink
//! the test reads back ([`RecordingEvents`]) and a tool runner that answers from a script and
//! counts calls per idempotency key ([`FakeTools`], for exactly-once tests), and the approvals
//! inbox's store fixture ([`fill_questions`]).

mod clock;
mod events;
mod ids;
mod questions;
mod tools;

pub use clock::ManualClock;
pub use events::RecordingEvents;
pub use ids::SequentialIds;
pub use questions::{EXPECTED_RECORDS, expected_questions, fill_questions, waiting_thread};
pub use tools::{FakeCall, FakeTools};
