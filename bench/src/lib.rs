//! What the serve benchmark (`src/bin/serve/`) shares with its smoke test: the HTTP load
//! generator and the bare axum JSON handler it measures as the ceiling.

pub mod bare;
pub mod load;
