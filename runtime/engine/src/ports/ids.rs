//! The id port: every id the engine mints comes from here.

/// Mints ids.
///
/// Minting cannot return an error (ids are drawn in many places of a step), so a source that
/// can fail, such as the operating system's random source, **counts** its failures instead
/// ([`Ids::failures`]) and hands out an id it never drew from its source. The engine reads the
/// count when a request begins and refuses every commit of that request once it has moved
/// (`RANDOM_SOURCE_UNAVAILABLE`): an id that could not be drawn never reaches the store or the
/// caller's answer, and the thread stays at its last checkpoint.
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
    /// How many ids this source could not draw since it was made (never decreases). A source
    /// that cannot fail keeps the default, 0.
    fn failures(&self) -> u64 {
        0
    }
}
