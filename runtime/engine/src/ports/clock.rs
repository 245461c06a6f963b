//! The clock port: the engine reads the time only here, so tests control expiry exactly.

/// Milliseconds since the Unix epoch.
pub type Timestamp = u64;

/// The current time.
pub trait Clock: Send + Sync {
    /// Now, in milliseconds since the Unix epoch.
    fn now(&self) -> Timestamp;

    /// Now, in seconds since the Unix epoch, as the wire's float timestamps.
    fn now_seconds(&self) -> f64 {
        #[expect(clippy::cast_precision_loss, reason = "a wire timestamp is a float of seconds")]
        let seconds = self.now() as f64 / 1000.0;
        seconds
    }
}
