//! `tenxc keygen -o PREFIX`: makes an Ed25519 key pair for signing artifacts, written to
//! `PREFIX.secret` (readable by its owner only) and `PREFIX.public`. Existing files are never
//! overwritten.

use clap::Args;
use miette::{IntoDiagnostic, Result, WrapErr, miette};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct KeygenArgs {
    /// Path prefix of the key files: writes `PREFIX.secret` and `PREFIX.public`.
    #[arg(short = 'o', long = "output", value_name = "PREFIX")]
    pub prefix: PathBuf,
}

pub fn run(args: &KeygenArgs) -> Result<ExitCode> {
    let secret_path = with_suffix(&args.prefix, "secret");
    let public_path = with_suffix(&args.prefix, "public");
    for path in [&secret_path, &public_path] {
        if path.exists() {
            return Err(miette!(
                help = "choose another prefix, or remove the old key files if you really mean to replace them",
                "`{}` already exists; `tenxc keygen` never overwrites a key",
                path.display()
            ));
        }
    }
    let (secret, public) =
        tenx_artifact::generate_keypair().map_err(|error| miette!("cannot make a key pair: {error}"))?;
    create_new(&secret_path, secret.to_text().as_bytes(), true)?;
    if let Err(error) = create_new(&public_path, public.to_text().as_bytes(), false) {
        let _ = std::fs::remove_file(&secret_path);
        return Err(error);
    }
    println!(
        "wrote {} (keep it private) and {}\nfingerprint: {}",
        secret_path.display(),
        public_path.display(),
        public.fingerprint()
    );
    Ok(ExitCode::SUCCESS)
}

/// `PREFIX.suffix`, keeping any dots already in the prefix.
fn with_suffix(prefix: &Path, suffix: &str) -> PathBuf {
    let mut name = prefix.as_os_str().to_owned();
    name.push(".");
    name.push(suffix);
    PathBuf::from(name)
}

/// Creates `path`, failing if it exists; a private file gets mode 0600 on Unix.
fn create_new(path: &Path, bytes: &[u8], private: bool) -> Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(if private { 0o600 } else { 0o644 });
    }
    #[cfg(not(unix))]
    let _ = private;
    options
        .open(path)
        .and_then(|mut file| file.write_all(bytes))
        .into_diagnostic()
        .wrap_err_with(|| format!("cannot write `{}`", path.display()))
}
