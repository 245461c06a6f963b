//! A private PostgreSQL cluster that speaks only TLS, for the TLS tests: `initdb` and `pg_ctl`
//! from `/usr/lib/postgresql/*/bin` (run as the `postgres` user when the tests run as root), a
//! free port on 127.0.0.1, a temporary directory, a CA and a server certificate for `localhost`
//! alone made with rcgen, `ssl = on` and only `hostssl` lines in `pg_hba.conf` (or, from
//! [`start_plain`], `ssl = off` and plain `host` lines). Stopped and removed when dropped.
//!
//! Without the binaries the tests say that they skip; when the binaries exist but the cluster
//! does not start, they skip too, except under `CI=true`, where that fails them.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, KeyUsagePurpose,
};

/// A running TLS-only cluster (superuser `postgres`, trust authentication over TLS).
pub struct TlsServer {
    dir: tempfile::TempDir,
    bin: PathBuf,
    as_postgres: bool,
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// The CA that signed the server's certificate (for `localhost` only), as a PEM file.
    pub ca: PathBuf,
    /// Another CA, which signed nothing the server shows.
    pub other_ca: PathBuf,
}

/// Starts a cluster, or says why not and returns `None` (the test then skips).
pub fn start() -> Option<TlsServer> {
    start_with(true)
}

/// Starts a cluster without TLS (`ssl = off`, plain `host` lines), likewise.
pub fn start_plain() -> Option<TlsServer> {
    start_with(false)
}

fn start_with(tls: bool) -> Option<TlsServer> {
    let Some(bin) = binaries() else {
        eprintln!("skipping: no initdb in /usr/lib/postgresql/*/bin (install PostgreSQL's server binaries)");
        return None;
    };
    match start_in(bin, tls) {
        Ok(server) => Some(server),
        Err(why) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("the private TLS PostgreSQL did not start: {why}")
        }
        Err(why) => {
            eprintln!("skipping: the private TLS PostgreSQL did not start: {why}");
            None
        }
    }
}

/// The newest `/usr/lib/postgresql/VERSION/bin` holding `initdb`.
fn binaries() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin)
}

fn start_in(bin: PathBuf, tls: bool) -> Result<TlsServer, String> {
    let as_postgres = run(Command::new("id").arg("-u"))?.trim() == "0";
    let dir = tempfile::Builder::new()
        .prefix("tenx-tls-pg")
        .tempdir()
        .map_err(|error| format!("temporary directory: {error}"))?;
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map_err(|error| format!("finding a free port: {error}"))?
        .port();
    let (ca, other_ca) = (dir.path().join("ca.pem"), dir.path().join("other-ca.pem"));
    certificates(dir.path(), &ca, &other_ca).map_err(|error| format!("making certificates: {error}"))?;
    let server = TlsServer {
        dir,
        bin,
        as_postgres,
        port,
        ca,
        other_ca,
    };
    if as_postgres {
        run(Command::new("chown").arg("-R").arg("postgres").arg(server.dir.path()))?;
    }
    let data = server.data();
    server.run_tool(
        "initdb",
        &[
            "-D",
            path(&data)?,
            "-A",
            "trust",
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "--no-sync",
            "--no-instructions",
        ],
    )?;
    let dir = server.dir.path().to_path_buf();
    let (ssl, host) = if tls { ("on", "hostssl") } else { ("off", "host") };
    let settings = format!(
        "\nport = {port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{}'\nssl = {ssl}\n\
         ssl_cert_file = '{}'\nssl_key_file = '{}'\nfsync = off\nmax_connections = 40\nshared_buffers = 16MB\n",
        dir.display(),
        dir.join("server.pem").display(),
        dir.join("server.key").display(),
    );
    append(&data.join("postgresql.conf"), &settings)?;
    std::fs::write(
        data.join("pg_hba.conf"),
        format!("local all all trust\n{host} all all 127.0.0.1/32 trust\n{host} all all ::1/128 trust\n"),
    )
    .map_err(|error| format!("writing pg_hba.conf: {error}"))?;
    let log = dir.join("server.log");
    let started = server.run_tool(
        "pg_ctl",
        &["-D", path(&data)?, "-l", path(&log)?, "-w", "-t", "30", "start"],
    );
    if let Err(why) = started {
        let log = std::fs::read_to_string(&log).unwrap_or_default();
        return Err(format!("{why}\n{log}"));
    }
    Ok(server)
}

impl TlsServer {
    /// A URL to the cluster's `postgres` database at `host` (`localhost` or `127.0.0.1`).
    pub fn url(&self, host: &str, query: &str) -> String {
        format!("postgres://postgres@{host}:{}/postgres?{query}", self.port)
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// Runs one of the server's tools, as `postgres` when the tests run as root.
    fn run_tool(&self, tool: &str, args: &[&str]) -> Result<String, String> {
        let program = self.bin.join(tool);
        let mut command = if self.as_postgres {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(program);
            command
        } else {
            Command::new(program)
        };
        // In a directory the postgres user can read (the tests' own may not be).
        command.args(args).current_dir(self.dir.path());
        run(&mut command)
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let data = self.data();
        let stopped =
            path(&data).and_then(|data| self.run_tool("pg_ctl", &["-D", data, "-m", "immediate", "-w", "stop"]));
        if let Err(why) = stopped {
            eprintln!("could not stop the private TLS PostgreSQL: {why}");
        }
    }
}

/// Writes a CA, a server certificate for `localhost` (signed by it) with its key, and a
/// second, unrelated CA.
fn certificates(dir: &Path, ca: &Path, other_ca: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let ca_params = authority("tenx test CA")?;
    let ca_key = KeyPair::generate()?;
    std::fs::write(ca, ca_params.self_signed(&ca_key)?.pem())?;
    let other_params = authority("tenx other CA")?;
    std::fs::write(other_ca, other_params.self_signed(&KeyPair::generate()?)?.pem())?;
    let mut server = CertificateParams::new(vec!["localhost".to_owned()])?;
    server.distinguished_name.push(DnType::CommonName, "localhost");
    server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    server.key_usages = vec![KeyUsagePurpose::DigitalSignature, KeyUsagePurpose::KeyEncipherment];
    let server_key = KeyPair::generate()?;
    let issuer = Issuer::new(ca_params, ca_key);
    std::fs::write(dir.join("server.pem"), server.signed_by(&server_key, &issuer)?.pem())?;
    let key = dir.join("server.key");
    std::fs::write(&key, server_key.serialize_pem())?;
    // PostgreSQL refuses a key others can read.
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    Ok(())
}

fn authority(name: &str) -> Result<CertificateParams, rcgen::Error> {
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    Ok(params)
}

fn append(file: &Path, text: &str) -> Result<(), String> {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .append(true)
        .open(file)
        .and_then(|mut file| file.write_all(text.as_bytes()))
        .map_err(|error| format!("writing {}: {error}", file.display()))
}

fn path(path: &Path) -> Result<&str, String> {
    path.to_str().ok_or_else(|| format!("{} is not UTF-8", path.display()))
}

/// Runs `command`; its standard output, or what it printed when it failed.
fn run(command: &mut Command) -> Result<String, String> {
    let Output { status, stdout, stderr } = command.output().map_err(|error| format!("{command:?}: {error}"))?;
    if status.success() {
        Ok(String::from_utf8_lossy(&stdout).into_owned())
    } else {
        Err(format!(
            "{command:?} failed ({status}): {}{}",
            String::from_utf8_lossy(&stdout),
            String::from_utf8_lossy(&stderr)
        ))
    }
}
