//! `tenx deploy`: the files it writes parse (YAML by a YAML parser, the Dockerfile by its
//! instructions), every `tenx` command line they name parses with the real `tenx` parser and
//! resolves to production settings, every environment variable they set is one `tenx serve`
//! reads, the image's health check asks a real server, and existing files are kept without
//! `--force`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a panic is a failed test"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use clap::Parser;
use serde_json::Value;

const ORIGINS: &str = "https://app.example.com,https://admin.example.com";

fn deploy(dir: &Path, extra: &[&str]) -> ExitCode {
    let mut args = vec![
        "tenx".to_owned(),
        "deploy".to_owned(),
        "--out".to_owned(),
        dir.display().to_string(),
        "--origins".to_owned(),
        ORIGINS.to_owned(),
    ];
    args.extend(extra.iter().map(|arg| (*arg).to_owned()));
    tenx::main_with(args)
}

fn read(dir: &Path, path: &str) -> String {
    std::fs::read_to_string(dir.join(path)).unwrap_or_else(|error| panic!("{path}: {error}"))
}

fn yaml(dir: &Path, path: &str) -> Value {
    yaml_serde::from_str(&read(dir, path)).unwrap_or_else(|error| panic!("{path} is not YAML: {error}"))
}

/// A Dockerfile's instructions, continuation lines joined, comments and blank lines dropped:
/// `(INSTRUCTION, arguments)`.
fn instructions(text: &str) -> Vec<(String, String)> {
    let mut instructions = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if current.is_empty() && (trimmed.is_empty() || trimmed.starts_with('#')) {
            continue;
        }
        match trimmed.strip_suffix('\\') {
            Some(start) => {
                current.push_str(start);
                current.push(' ');
            }
            None => {
                current.push_str(trimmed);
                let (instruction, arguments) = current.split_once(' ').unwrap();
                instructions.push((instruction.to_owned(), arguments.trim().to_owned()));
                current.clear();
            }
        }
    }
    assert!(current.is_empty(), "a continuation at the end: {current}");
    instructions
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {value}"))
        .iter()
        .map(|item| item.as_str().unwrap().to_owned())
        .collect()
}

/// Parses `argv` with the real `tenx` parser; a `serve` line must also resolve, with `env`, to
/// production settings. The names settings asked the environment for are added to `read`.
fn check_command_line(argv: &[String], env: &BTreeMap<String, String>, read: &Arc<Mutex<BTreeSet<String>>>) {
    let cli = tenx::Cli::try_parse_from(argv).unwrap_or_else(|error| panic!("{argv:?}: {error}"));
    let tenx::Command::Serve(serve) = cli.command else {
        panic!("{argv:?} is not `tenx serve`");
    };
    assert_eq!(serve.artifact, Path::new("/app/graph.tenxg"), "{argv:?}");
    let asked = read.clone();
    let resolved = tenx::serve::resolve_with(&serve.server, None, move |name| {
        asked.lock().unwrap().insert(name.to_owned());
        env.get(name).cloned()
    })
    .unwrap_or_else(|error| panic!("{argv:?} with {env:?}: {error:?}"));
    assert_eq!(resolved.server.mode, tenx_server::Mode::Production);
    assert_eq!(resolved.server.origins, ORIGINS.split(',').collect::<Vec<_>>());
    assert!(resolved.server.jwt.is_some(), "auth on");
    assert_eq!(resolved.address.to_string(), "0.0.0.0:8080", "{argv:?}");
}

/// What a secret stands for when the command lines are resolved.
fn sample(name: &str) -> String {
    match name {
        "JWT_SECRET_KEY" => "a-secret-of-forty-bytes-for-the-test-0123".to_owned(),
        "DATABASE_URL" => "postgres://tenx:password@postgres:5432/tenx".to_owned(),
        other => panic!("no sample for {other}"),
    }
}

#[test]
fn the_files_parse_and_name_only_commands_and_settings_that_exist() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("deploy");
    let code = deploy(
        &out,
        &[
            "--replicas",
            "3",
            "--port",
            "8080",
            "--image",
            "registry.example.com/refunds:1.2",
            "--name",
            "refunds",
            "--artifact",
            "build/refund.tenxg",
        ],
    );
    assert_eq!(code, ExitCode::SUCCESS);
    let read_env = Arc::new(Mutex::new(BTreeSet::new()));
    let mut named_env: BTreeSet<String> = BTreeSet::new();
    for (path, _) in tenx::deploy::TEMPLATES {
        let text = read(&out, path);
        assert!(!text.contains("{{"), "{path} keeps a placeholder");
    }

    // The Dockerfile: two stages, the second slim Debian without root, the artifact inside.
    let dockerfile = instructions(&read(&out, "Dockerfile"));
    let froms: Vec<&String> = dockerfile
        .iter()
        .filter(|(instruction, _)| instruction == "FROM")
        .map(|(_, arguments)| arguments)
        .collect();
    assert_eq!(froms.len(), 2, "{froms:?}");
    let rust_version = env!("CARGO_PKG_RUST_VERSION");
    assert!(
        froms[0].starts_with(&format!("rust:{rust_version}-")) && froms[0].ends_with(" AS build"),
        "the build stage is the workspace's toolchain: {}",
        froms[0]
    );
    assert!(
        froms[1].starts_with("debian:") && froms[1].ends_with("-slim"),
        "{}",
        froms[1]
    );
    let (build, run) = dockerfile.split_at(dockerfile.iter().rposition(|(i, _)| i == "FROM").unwrap());
    let argument = |stage: &[(String, String)], instruction: &str| -> Vec<String> {
        stage
            .iter()
            .filter(|(name, _)| name == instruction)
            .map(|(_, arguments)| arguments.clone())
            .collect()
    };
    assert!(
        argument(build, "RUN")
            .iter()
            .any(|run| run.contains("cargo build --release --locked -p tenx")),
        "{build:?}"
    );
    let user = argument(run, "USER");
    assert_eq!(user.len(), 1, "{run:?}");
    assert!(!user[0].starts_with("root") && !user[0].starts_with("0"), "{user:?}");
    let copies = argument(run, "COPY");
    assert!(
        copies
            .iter()
            .any(|copy| copy.starts_with("--from=build ") && copy.ends_with(" /usr/local/bin/tenx"))
    );
    assert!(
        copies.contains(&"build/refund.tenxg /app/graph.tenxg".to_owned()),
        "{copies:?}"
    );
    assert_eq!(argument(run, "EXPOSE"), ["8080"]);
    let healthcheck = argument(run, "HEALTHCHECK");
    assert_eq!(healthcheck.len(), 1);
    assert!(healthcheck[0].contains("/health/live") && healthcheck[0].contains("127.0.0.1/8080"));
    for env in argument(run, "ENV") {
        let (name, value) = env.split_once('=').unwrap();
        assert_eq!((name, value), ("MODE", "production"));
        named_env.insert(name.to_owned());
    }
    let entrypoint: Vec<String> = serde_json::from_str(&argument(run, "ENTRYPOINT")[0]).unwrap();
    assert_eq!(entrypoint, ["tenx"]);
    let cmd: Vec<String> = serde_json::from_str(&argument(run, "CMD")[0]).unwrap();
    let docker_env = BTreeMap::from([
        ("MODE".to_owned(), "production".to_owned()),
        ("ORIGINS".to_owned(), ORIGINS.to_owned()),
        ("JWT_SECRET_KEY".to_owned(), sample("JWT_SECRET_KEY")),
    ]);
    check_command_line(&[entrypoint.clone(), cmd].concat(), &docker_env, &read_env);

    // docker-compose.yml: PostgreSQL with a health check, tenx waiting for it.
    let compose = yaml(&out, "docker-compose.yml");
    let postgres = &compose["services"]["postgres"];
    assert!(postgres["image"].as_str().unwrap().starts_with("postgres:"));
    assert!(
        strings(&postgres["healthcheck"]["test"])
            .join(" ")
            .contains("pg_isready")
    );
    let tenx = &compose["services"]["tenx"];
    assert_eq!(tenx["image"], "registry.example.com/refunds:1.2");
    assert_eq!(tenx["depends_on"]["postgres"]["condition"], "service_healthy");
    assert_eq!(strings(&tenx["ports"]), ["8080:8080"]);
    assert!(
        strings(&tenx["healthcheck"]["test"])
            .join(" ")
            .contains("/health/ready")
    );
    let environment = tenx["environment"].as_object().unwrap();
    let database = environment["DATABASE_URL"].as_str().unwrap();
    assert!(
        database.starts_with("postgres://tenx:") && database.ends_with("@postgres:5432/tenx"),
        "{database}"
    );
    let compose_env: BTreeMap<String, String> = environment
        .iter()
        .map(|(name, value)| {
            let value = value.as_str().unwrap();
            // `${VAR:?…}` is the operator's value: the test stands in for it.
            let value = if value.contains("${") {
                sample(name)
            } else {
                value.to_owned()
            };
            (name.clone(), value)
        })
        .collect();
    named_env.extend(compose_env.keys().cloned());
    check_command_line(
        &[entrypoint.clone(), strings(&tenx["command"])].concat(),
        &compose_env,
        &read_env,
    );

    // Kubernetes: the Deployment's replicas, probes, Secrets; the Service in front.
    let deployment = yaml(&out, "kubernetes/deployment.yaml");
    assert_eq!(deployment["apiVersion"], "apps/v1");
    assert_eq!(deployment["kind"], "Deployment");
    assert_eq!(deployment["metadata"]["name"], "refunds");
    assert_eq!(deployment["spec"]["replicas"], 3);
    let labels = &deployment["spec"]["template"]["metadata"]["labels"];
    assert_eq!(&deployment["spec"]["selector"]["matchLabels"], labels);
    let pod = &deployment["spec"]["template"]["spec"];
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    let containers = pod["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 1);
    let container = &containers[0];
    assert_eq!(container["image"], "registry.example.com/refunds:1.2");
    assert_eq!(container["ports"][0]["containerPort"], 8080);
    let port_name = container["ports"][0]["name"].clone();
    for (probe, path) in [("readinessProbe", "/health/ready"), ("livenessProbe", "/health/live")] {
        assert_eq!(container[probe]["httpGet"]["path"], path, "{probe}");
        assert_eq!(container[probe]["httpGet"]["port"], port_name, "{probe}");
    }
    let mut kubernetes_env = BTreeMap::new();
    for variable in container["env"].as_array().unwrap() {
        let name = variable["name"].as_str().unwrap().to_owned();
        let value = match (&variable["value"], &variable["valueFrom"]["secretKeyRef"]) {
            (Value::String(value), Value::Null) => value.clone(),
            (Value::Null, secret) if secret.is_object() => {
                assert_eq!(secret["name"], "refunds-secrets", "{name}");
                assert!(secret["key"].is_string(), "{name}");
                sample(&name)
            }
            other => panic!("{name}: {other:?}"),
        };
        kubernetes_env.insert(name, value);
    }
    assert_eq!(kubernetes_env["MODE"], "production");
    assert_eq!(kubernetes_env["ORIGINS"], ORIGINS);
    for secret in ["DATABASE_URL", "JWT_SECRET_KEY"] {
        let from = &container["env"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == secret)
            .unwrap()["valueFrom"];
        assert!(from["secretKeyRef"].is_object(), "{secret} comes from a Secret");
    }
    named_env.extend(kubernetes_env.keys().cloned());
    assert!(container["command"].is_null(), "the image's ENTRYPOINT runs");
    check_command_line(
        &[entrypoint, strings(&container["args"])].concat(),
        &kubernetes_env,
        &read_env,
    );
    let service = yaml(&out, "kubernetes/service.yaml");
    assert_eq!(service["kind"], "Service");
    assert_eq!(&service["spec"]["selector"], labels);
    assert_eq!(service["spec"]["ports"][0]["targetPort"], port_name);

    // Every variable the files set is one `tenx serve` reads.
    let read_env = read_env.lock().unwrap().clone();
    for name in &named_env {
        assert!(
            read_env.contains(name),
            "{name} is set by the deploy files but tenx serve never reads it (it reads {read_env:?})"
        );
    }
}

#[test]
fn existing_files_are_kept_without_force() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(deploy(dir.path(), &[]), ExitCode::SUCCESS);
    std::fs::write(dir.path().join("docker-compose.yml"), "# mine\n").unwrap();
    std::fs::remove_file(dir.path().join("kubernetes/service.yaml")).unwrap();
    assert_eq!(deploy(dir.path(), &[]), ExitCode::from(2));
    assert_eq!(read(dir.path(), "docker-compose.yml"), "# mine\n");
    assert!(
        !dir.path().join("kubernetes/service.yaml").exists(),
        "all or nothing: a refusal writes no file"
    );
    assert_eq!(deploy(dir.path(), &["--force", "--replicas", "5"]), ExitCode::SUCCESS);
    assert!(read(dir.path(), "docker-compose.yml").contains("postgres"));
    assert!(read(dir.path(), "kubernetes/deployment.yaml").contains("replicas: 5"));
    assert!(dir.path().join("kubernetes/service.yaml").exists());
}

#[test]
fn values_that_could_break_a_file_are_refused_before_anything_is_written() {
    for (flag, value, says) in [
        ("--name", "Bad Name", "--name"),
        ("--name", "-refunds", "--name"),
        ("--image", "app\"; rm -rf /", "--image"),
        ("--artifact", "../outside.tenxg", "--artifact"),
        ("--artifact", "/abs/graph.tenxg", "--artifact"),
        ("--origins", "*", "--origins"),
        ("--origins", "https://ok.example, https://x.example\"", "--origins"),
        ("--replicas", "0", "--replicas"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut args = tenx::deploy::DeployArgs {
            out: dir.path().to_owned(),
            force: false,
            origins: ORIGINS.to_owned(),
            artifact: "graph.tenxg".to_owned(),
            replicas: 2,
            image: "tenx-app:latest".to_owned(),
            name: "tenx".to_owned(),
            port: 8000,
        };
        match flag {
            "--name" => args.name = value.to_owned(),
            "--image" => args.image = value.to_owned(),
            "--artifact" => args.artifact = value.to_owned(),
            "--origins" => args.origins = value.to_owned(),
            "--replicas" => args.replicas = value.parse().unwrap(),
            _ => unreachable!(),
        }
        let error = tenx::deploy::write(&args).unwrap_err().to_string();
        assert!(error.starts_with(says), "{flag} {value}: {error}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "{flag} {value}");
    }
    assert!(
        tenx::Cli::try_parse_from(["tenx", "deploy", "--out", "x"]).is_err(),
        "--origins is required"
    );
}

const HELLO: &[u8] = include_bytes!("../../../compiler/artifact/tests/fixtures/hello.tenxg");

/// Runs a health check's `["bash", "-c", SCRIPT]` (as `HEALTHCHECK CMD` and compose give it).
async fn probe(command: &[String]) -> bool {
    let (program, args) = command.split_first().unwrap();
    let mut child = tokio::process::Command::new(program);
    child.args(args);
    let status = tokio::time::timeout(std::time::Duration::from_secs(10), child.status())
        .await
        .unwrap()
        .unwrap();
    status.success()
}

#[tokio::test]
async fn the_health_checks_ask_a_real_server() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let files = tenx::deploy::render(&tenx::deploy::DeployArgs {
        out: "deploy".into(),
        force: false,
        origins: ORIGINS.to_owned(),
        artifact: "graph.tenxg".to_owned(),
        replicas: 2,
        image: "tenx-app:latest".to_owned(),
        name: "tenx".to_owned(),
        port,
    })
    .unwrap();
    let text = |path: &str| files.iter().find(|(name, _)| *name == path).unwrap().1.clone();
    let dockerfile = instructions(&text("Dockerfile"));
    let healthcheck = &dockerfile.iter().find(|(name, _)| name == "HEALTHCHECK").unwrap().1;
    let json = healthcheck.split_once("CMD ").unwrap().1;
    let image_probe: Vec<String> = serde_json::from_str(json).unwrap();
    let compose: Value = yaml_serde::from_str(&text("docker-compose.yml")).unwrap();
    let compose_probe = strings(&compose["services"]["tenx"]["healthcheck"]["test"]);
    assert_eq!(compose_probe[0], "CMD");
    let compose_probe = compose_probe[1..].to_vec();

    let loaded = tenx_runtime::load(HELLO, &tenx_artifact::TrustPolicy::signature_optional()).unwrap();
    let engine = tenx_runtime::HostBuilder::new(loaded)
        .store(Arc::new(tenx_engine::MemoryStore::new()))
        .build(|_| None)
        .unwrap();
    let state = tenx_server::AppState::new(engine, tenx_server::ServerSettings::default()).unwrap();
    let app = tenx_server::router(state).into_make_service_with_connect_info::<std::net::SocketAddr>();
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    assert!(probe(&image_probe).await, "the image's HEALTHCHECK: {image_probe:?}");
    assert!(probe(&compose_probe).await, "compose's health check: {compose_probe:?}");
    server.abort();
    let _ = server.await;
    assert!(!probe(&image_probe).await, "nothing answers on the port any more");
}
