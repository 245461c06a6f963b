//! The id port: every id the engine mints comes from here.

/// Mints ids.
pub trait Ids: Send + Sync {
    /// A new thread id (a UUID v4 string by default).
    fn thread_id(&self) -> String;
    /// A new run id.
    fn run_id(&self) -> String;
    /// A new message id.
    fn message_id(&self) -> String;
    /// A new interrupt id: `int_` followed by 32 lowercase hex digits **from a CSPRNG**, so an
    /// id cannot be guessed from another.
    fn interrupt_id(&self) -> String;
}
