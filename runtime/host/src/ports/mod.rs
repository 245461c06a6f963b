//! The engine's clock and id ports for real use: [`SystemClock`] reads the operating system's
//! wall clock, [`OsIds`] draws ids from its CSPRNG. (`tenx_engine::testing` has deterministic
//! ones for tests; they must never serve real traffic.)

mod clock;
mod ids;

pub use clock::SystemClock;
pub use ids::{OsIds, RandomSourceError};
