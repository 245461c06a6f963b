//! The approval console (`/console`, issue 16) in a real browser: headless Chromium driven
//! through Debian's chromedriver against the real router of `tenx-server` on loopback. Each
//! flow drives the page only through the DOM contract of the console's spec, and checks the
//! server side as well: whether the fake tool ran (once, or not at all) and what the approval
//! record says about who answered and how. The tests save screenshots of the inbox and the
//! detail view under `target/console-screenshots/` (and `docs/console/` with
//! `TENX_UPDATE_SCREENSHOTS=1`). Without chromedriver they are skipped, except under CI.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed step should stop the test"
)]

#[allow(dead_code, reason = "the serve tests' harness: this binary uses part of it")]
#[path = "../serve/harness.rs"]
mod harness;

mod browser;
mod desk;

mod approve;
mod batch;
mod difference;
mod edit;
mod escalate;
mod expiry;
mod keyboard;
mod refusals;
