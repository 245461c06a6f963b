//! `tenx deploy --out DIR`: writes the files that run a sealed artifact in containers: a
//! Dockerfile (build `tenx` in a rust image, run it in slim Debian as a user without privileges),
//! its `.dockerignore`, a docker-compose.yml (tenx and PostgreSQL) and Kubernetes manifests (a
//! Deployment of `--replicas` replicas, a Service). The templates are the files beside this one,
//! embedded, filled by placeholder substitution (`{{name}}`); every value is checked first so
//! none can break a file's syntax. Existing files are never overwritten without `--force`.

use std::path::PathBuf;

use clap::Args;
use miette::{IntoDiagnostic, Result, WrapErr, miette};

/// `tenx deploy` flags.
#[derive(Debug, Clone, Args)]
pub struct DeployArgs {
    /// The directory to write into (created when missing).
    #[arg(long)]
    pub out: PathBuf,
    /// Overwrite files that already exist.
    #[arg(long)]
    pub force: bool,
    /// The allowed browser origins, comma-separated (`ORIGINS`: production requires them).
    #[arg(long)]
    pub origins: String,
    /// The sealed artifact (`tenxc build` output), as a path inside the Docker build context
    /// (the repository root).
    #[arg(long, default_value = "graph.tenxg")]
    pub artifact: String,
    /// How many replicas the Kubernetes Deployment runs.
    #[arg(long, default_value_t = 2)]
    pub replicas: u16,
    /// The image the compose file and the manifests run (what `docker build -t` names).
    #[arg(long, default_value = "tenx-app:latest")]
    pub image: String,
    /// The name of the Deployment and Service (and the `NAME-secrets` Secret they read).
    #[arg(long, default_value = "tenx")]
    pub name: String,
    /// The port `tenx serve` listens on inside the container.
    #[arg(long, default_value_t = 8000)]
    pub port: u16,
}

/// The templates: where each is written under `--out`, and its text.
pub const TEMPLATES: &[(&str, &str)] = &[
    ("Dockerfile", include_str!("Dockerfile")),
    ("Dockerfile.dockerignore", include_str!("Dockerfile.dockerignore")),
    ("docker-compose.yml", include_str!("docker-compose.yml")),
    ("kubernetes/deployment.yaml", include_str!("kubernetes/deployment.yaml")),
    ("kubernetes/service.yaml", include_str!("kubernetes/service.yaml")),
];

/// Writes the files; prints what was written and what to run next.
pub fn run(args: &DeployArgs) -> Result<()> {
    let written = write(args)?;
    for path in &written {
        eprintln!("tenx deploy: wrote {}", path.display());
    }
    let dir = args.out.display();
    eprintln!(
        "next: docker build -f {dir}/Dockerfile -t {image} .   (from the repository root, with {artifact} in it)\n\
         then: docker compose -f {dir}/docker-compose.yml up -d   (POSTGRES_PASSWORD and JWT_SECRET_KEY set)\n\
         or:   kubectl create secret generic {name}-secrets --from-literal=database-url=… --from-literal=jwt-secret-key=…\n\
         \x20     kubectl apply -f {dir}/kubernetes/",
        image = args.image,
        artifact = args.artifact,
        name = args.name,
    );
    Ok(())
}

/// Writes every file under `args.out` (all or none: any existing file refuses without
/// `--force`); the paths written.
pub fn write(args: &DeployArgs) -> Result<Vec<PathBuf>> {
    let files = render(args)?;
    let targets: Vec<(PathBuf, String)> = files
        .into_iter()
        .map(|(path, text)| (args.out.join(path), text))
        .collect();
    if !args.force {
        let existing: Vec<String> = targets
            .iter()
            .filter(|(path, _)| path.exists())
            .map(|(path, _)| path.display().to_string())
            .collect();
        if !existing.is_empty() {
            return Err(miette!(
                help = "pass --force to overwrite them, or choose another --out",
                "not overwriting {}",
                existing.join(", ")
            ));
        }
    }
    for (path, text) in &targets {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .into_diagnostic()
                .wrap_err_with(|| format!("cannot create `{}`", dir.display()))?;
        }
        std::fs::write(path, text)
            .into_diagnostic()
            .wrap_err_with(|| format!("cannot write `{}`", path.display()))?;
    }
    Ok(targets.into_iter().map(|(path, _)| path).collect())
}

/// Every file's path (under `--out`) and text, with the values substituted.
pub fn render(args: &DeployArgs) -> Result<Vec<(&'static str, String)>> {
    let values = values(args)?;
    TEMPLATES
        .iter()
        .map(|(path, template)| {
            let text = values.iter().fold((*template).to_owned(), |text, (name, value)| {
                text.replace(&format!("{{{{{name}}}}}"), value)
            });
            if let Some(at) = text.find("{{") {
                let rest = text.get(at..).unwrap_or_default();
                let placeholder = rest.split("}}").next().unwrap_or(rest);
                return Err(miette!(
                    "the template {path} has a placeholder without a value: {placeholder}"
                ));
            }
            Ok((*path, text))
        })
        .collect()
}

/// The placeholders and their values, each checked to be safe where it goes.
fn values(args: &DeployArgs) -> Result<Vec<(&'static str, String)>> {
    let name = &args.name;
    let dns_label = !name.is_empty()
        && name.len() <= 40
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if !dns_label {
        return Err(miette!(
            "--name `{name}`: use lowercase letters, digits and `-` (at most 40, not at the ends): it names Kubernetes objects"
        ));
    }
    if args.replicas == 0 {
        return Err(miette!("--replicas must be at least 1"));
    }
    if args.port == 0 {
        return Err(miette!("--port must be a fixed port, not 0"));
    }
    plain("--image", &args.image, |c| {
        c.is_ascii_alphanumeric() || "._-/:@".contains(c)
    })?;
    plain("--artifact", &args.artifact, |c| {
        c.is_ascii_alphanumeric() || "._-/".contains(c)
    })?;
    if args.artifact.starts_with('/') || args.artifact.split('/').any(|part| part == "..") {
        return Err(miette!(
            "--artifact `{}`: a path inside the build context (the repository root), without `..`",
            args.artifact
        ));
    }
    let origins: Vec<&str> = args
        .origins
        .split(',')
        .map(str::trim)
        .filter(|origin| !origin.is_empty())
        .collect();
    if origins.is_empty() {
        return Err(miette!(
            "--origins: name the origins browsers call from (production requires them)"
        ));
    }
    for origin in &origins {
        let scheme = origin.starts_with("https://") || origin.starts_with("http://");
        plain("--origins", origin, |c| {
            c.is_ascii_alphanumeric() || ".-:/[]".contains(c)
        })?;
        if !scheme {
            return Err(miette!(
                "--origins: `{origin}` is not an origin such as https://app.example.com (`*` is refused in production)"
            ));
        }
    }
    let dir: String = args
        .out
        .display()
        .to_string()
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    Ok(vec![
        ("name", name.clone()),
        ("replicas", args.replicas.to_string()),
        ("port", args.port.to_string()),
        ("image", args.image.clone()),
        ("artifact", args.artifact.clone()),
        ("origins", origins.join(",")),
        ("dir", dir),
        ("rust_version", env!("CARGO_PKG_RUST_VERSION").to_owned()),
    ])
}

/// A value made of `allowed` characters only (no quote, space or newline can reach a file).
fn plain(flag: &str, value: &str, allowed: impl Fn(char) -> bool) -> Result<()> {
    if value.is_empty() || !value.chars().all(allowed) {
        return Err(miette!(
            "{flag} `{value}` holds a character it cannot (quotes, spaces, …)"
        ));
    }
    Ok(())
}
