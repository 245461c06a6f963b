//! The demo's auth: a fresh random JWT secret at every start, and two bearer tokens signed with
//! it, so the walk-through runs with auth and ownership on, as seed 003 does, without a key to
//! configure. `alice` asks for refunds and owns her threads; `carol` holds the `support_lead`
//! role `issue_refund`'s approval asks for (and is not the user who started the run, as the
//! approval's `separate_duties`, on for a high-risk tool, demands); `bob` holds no role and owns
//! nothing. The tokens are written to `refund-demo.env` in the data directory (shell
//! assignments, for `. .tenx/refund-demo.env`).

use std::path::{Path, PathBuf};

use miette::{IntoDiagnostic, Result, WrapErr, miette};
use serde_json::json;

/// How long the tokens are valid.
const VALID_SECONDS: u64 = 24 * 60 * 60;

/// The secret and the tokens signed with it.
pub struct Tokens {
    /// The secret, as `JWT_SECRET_KEY` carries it (64 hex digits).
    pub secret: String,
    /// `alice`: asks for refunds, owns her threads, holds no role.
    pub alice: String,
    /// `carol`: a `support_lead`, who may approve refunds.
    pub carol: String,
    /// `bob`: another user.
    pub bob: String,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Tokens").finish_non_exhaustive()
    }
}

impl Tokens {
    /// A fresh secret from the operating system's random source, and the two tokens.
    pub fn fresh() -> Result<Self> {
        let mut bytes = [0_u8; 32];
        getrandom::fill(&mut bytes).map_err(|error| miette!("no random source for the JWT secret: {error}"))?;
        let secret: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
        let exp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .into_diagnostic()?
            .as_secs()
            + VALID_SECONDS;
        let key = jsonwebtoken::EncodingKey::from_secret(secret.as_bytes())
            .map_err(|error| miette!("cannot use the demo's JWT secret: {error}"))?;
        let sign = |claims: serde_json::Value| {
            jsonwebtoken::encode(&jsonwebtoken::Header::default(), &claims, &key)
                .map_err(|error| miette!("cannot sign a demo token: {error}"))
        };
        let alice = sign(json!({"user_id": "alice", "exp": exp}))?;
        let carol = sign(json!({"user_id": "carol", "roles": ["support_lead"], "exp": exp}))?;
        let bob = sign(json!({"user_id": "bob", "exp": exp}))?;
        Ok(Self {
            secret,
            alice,
            carol,
            bob,
        })
    }

    /// Writes `ALICE=…`, `CAROL=…` and `BOB=…` to `refund-demo.env` in `data_dir`; returns its path.
    pub fn write(&self, data_dir: &Path) -> Result<PathBuf> {
        std::fs::create_dir_all(data_dir)
            .into_diagnostic()
            .wrap_err_with(|| format!("cannot create the data directory `{}`", data_dir.display()))?;
        let path = data_dir.join("refund-demo.env");
        let text = format!(
            "# Written by refund-demo at start: bearer tokens signed with this run's secret, valid 24 h.\n\
             ALICE={}\nCAROL={}\nBOB={}\n",
            self.alice, self.carol, self.bob
        );
        std::fs::write(&path, text)
            .into_diagnostic()
            .wrap_err_with(|| format!("cannot write `{}`", path.display()))?;
        Ok(path)
    }
}
