//! Headless Chromium for the console tests: Debian's `chromedriver` started on a free loopback
//! port as a child process (its process group killed on drop, so no browser outlives a failed
//! test), one WebDriver session over plain HTTP with a fresh profile, and the few waits and
//! reads the flows need. Sessions run one at a time ([`Browser::open`] holds a lock until the
//! browser is dropped): two Chromiums on a loaded 2-core machine make every wait flaky.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

/// Where Debian's packages put the driver and the browser.
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const CHROMIUM: &str = "/usr/bin/chromium";

/// How long a wait for the page lasts before the test fails.
pub const WAIT: Duration = Duration::from_secs(20);

/// The viewport of the screenshots (and of every session unless resized).
pub const WIDTH: u32 = 1280;
pub const HEIGHT: u32 = 900;

/// One browser session at a time, across the tests of this binary.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Whether the browser tests can run here. Without the packages they are skipped with a
/// message, except under CI, where a missing browser fails the run.
pub fn available() -> bool {
    let present = Path::new(CHROMEDRIVER).exists() && Path::new(CHROMIUM).exists();
    if !present {
        assert!(
            std::env::var_os("CI").is_none(),
            "the console's browser tests need {CHROMEDRIVER} and {CHROMIUM} under CI \
             (apt-get install chromium chromium-driver)"
        );
        eprintln!("skipped: install chromium chromium-driver to run the console's browser tests");
    }
    present
}

/// A `chromedriver` child in its own process group; dropping it kills the group (the driver
/// and every Chromium it started).
struct Driver {
    child: Child,
    port: u16,
    _profile: tempfile::TempDir,
}

impl Drop for Driver {
    fn drop(&mut self) {
        // The group id is the child's pid (`process_group(0)`); `kill -KILL -<pgid>` ends the
        // driver and the browsers it started, and nothing else.
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill")
            .args(["-KILL", "--", &group])
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A free loopback port (bound, read and released: a race with another process is possible but
/// harmless here, the driver would fail to start and the test says so).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

impl Driver {
    /// Starts chromedriver on a free port; a driver that exits at once (another process took
    /// the port between our check and its bind) is started again on another, up to 3 times.
    async fn start() -> Self {
        for _ in 0..3 {
            if let Some(driver) = Self::start_once().await {
                return driver;
            }
        }
        panic!("{CHROMEDRIVER} exited at start three times in a row");
    }

    /// One start; `None` when the driver exited before it answered.
    async fn start_once() -> Option<Self> {
        use std::os::unix::process::CommandExt;
        let port = free_port();
        let profile = tempfile::tempdir().unwrap();
        let log = profile.path().join("chromedriver.log");
        let child = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .arg("--allowed-ips=127.0.0.1")
            .arg(format!("--log-path={}", log.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {CHROMEDRIVER}: {error}"));
        let mut driver = Self {
            child,
            port,
            _profile: profile,
        };
        let status = format!("http://127.0.0.1:{port}/status");
        let client = reqwest::Client::new();
        let deadline = Instant::now() + WAIT;
        loop {
            if let Ok(response) = client.get(&status).send().await
                && let Ok(body) = response.json::<Value>().await
                && body["value"]["ready"] == true
            {
                return Some(driver);
            }
            if driver.child.try_wait().unwrap().is_some() {
                return None;
            }
            assert!(
                Instant::now() < deadline,
                "chromedriver did not answer on port {port} within {WAIT:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// A browser session: the WebDriver client, its driver, and the lock that keeps it alone.
pub struct Browser {
    pub client: Client,
    _driver: Driver,
    _profile: tempfile::TempDir,
    _alone: tokio::sync::MutexGuard<'static, ()>,
}

impl Browser {
    /// Starts a driver and a headless Chromium with a fresh profile, 1280×900.
    pub async fn open() -> Self {
        let alone = ONE_AT_A_TIME.lock().await;
        let driver = Driver::start().await;
        let profile = tempfile::tempdir().unwrap();
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            &format!("--window-size={WIDTH},{HEIGHT}"),
            &format!("--user-data-dir={}", profile.path().display()),
        ];
        let mut capabilities = serde_json::Map::new();
        capabilities.insert("browserName".into(), json!("chrome"));
        capabilities.insert("goog:chromeOptions".into(), json!({"binary": CHROMIUM, "args": args}));
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let client = ClientBuilder::new(connector)
            .capabilities(capabilities)
            .connect(&format!("http://127.0.0.1:{}", driver.port))
            .await
            .unwrap_or_else(|error| panic!("cannot open a Chromium session: {error}"));
        let browser = Self {
            client,
            _driver: driver,
            _profile: profile,
            _alone: alone,
        };
        browser.viewport(WIDTH, HEIGHT).await;
        browser
    }

    /// Resizes the window so that the page's viewport is `width`×`height` CSS pixels.
    pub async fn viewport(&self, width: u32, height: u32) {
        self.client.set_window_size(width, height).await.unwrap();
        // The window includes no chrome in headless mode on recent Chromium, but measure: the
        // screenshots must be exactly the viewport named.
        let inner = self
            .client
            .execute("return [window.innerWidth, window.innerHeight];", vec![])
            .await
            .unwrap();
        let (inner_width, inner_height) = (inner[0].as_u64().unwrap_or(0), inner[1].as_u64().unwrap_or(0));
        if (inner_width, inner_height) != (u64::from(width), u64::from(height)) {
            let extra_width = u32::try_from(u64::from(width).saturating_sub(inner_width)).unwrap();
            let extra_height = u32::try_from(u64::from(height).saturating_sub(inner_height)).unwrap();
            self.client
                .set_window_size(width + extra_width, height + extra_height)
                .await
                .unwrap();
        }
    }

    /// Closes the session (the driver is killed when `self` drops).
    pub async fn close(self) {
        let Self { client, .. } = self;
        let _ = client.close().await;
    }

    pub async fn goto(&self, url: &str) {
        self.client.goto(url).await.unwrap();
    }

    /// Sets the page's location hash (the console routes by it), as a link would.
    pub async fn go_hash(&self, hash: &str) {
        self.client
            .execute("window.location.hash = arguments[0];", vec![json!(hash)])
            .await
            .unwrap();
    }

    /// The element `css` selects, once it is in the page (waits up to [`WAIT`]).
    pub async fn find(&self, css: &str) -> Element {
        let found = self
            .client
            .wait()
            .at_most(WAIT)
            .every(Duration::from_millis(100))
            .for_element(Locator::Css(css))
            .await;
        match found {
            Ok(element) => element,
            Err(error) => panic!("no `{css}` in the page within {WAIT:?}: {error}\n{}", self.dump().await),
        }
    }

    /// Every element `css` selects now (no wait).
    pub async fn all(&self, css: &str) -> Vec<Element> {
        self.client.find_all(Locator::Css(css)).await.unwrap()
    }

    /// Whether `css` selects anything now.
    pub async fn has(&self, css: &str) -> bool {
        !self.all(css).await.is_empty()
    }

    /// Runs `script` (its `return` value comes back) with `args`.
    pub async fn js(&self, script: &str, args: Vec<Value>) -> Value {
        self.client.execute(script, args).await.unwrap()
    }

    /// Waits until `script` returns `true`, polling; fails with `what` and the page's text.
    pub async fn until(&self, what: &str, script: &str, args: Vec<Value>) {
        let deadline = Instant::now() + WAIT;
        loop {
            if self.js(script, args.clone()).await == Value::Bool(true) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "waited {WAIT:?} for {what}\n{}",
                self.dump().await
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The text of `css` (the first match, waited for): its `textContent` with runs of white
    /// space made one space and trimmed, as the server wrote it (CSS may show it in capitals).
    pub async fn text(&self, css: &str) -> String {
        self.find(css).await;
        let text = self
            .js(
                "const e = document.querySelector(arguments[0]); \
                 return e ? e.textContent.replace(/\\s+/g, ' ').trim() : '';",
                vec![json!(css)],
            )
            .await;
        text.as_str().unwrap_or("").to_owned()
    }

    /// Waits until the text of `css` contains `needle`; returns the text.
    pub async fn until_text(&self, css: &str, needle: &str) -> String {
        self.until(
            &format!("`{css}` to contain {needle:?}"),
            "const e = document.querySelector(arguments[0]); \
             return !!e && e.offsetParent !== null && e.textContent.includes(arguments[1]);",
            vec![json!(css), json!(needle)],
        )
        .await;
        self.text(css).await
    }

    /// Waits until `css` is in the page and shown.
    pub async fn until_shown(&self, css: &str) {
        self.until(
            &format!("`{css}` to be shown"),
            "const e = document.querySelector(arguments[0]); \
             return !!e && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';",
            vec![json!(css)],
        )
        .await;
    }

    /// Whether `css` is in the page and shown (no wait).
    pub async fn shown(&self, css: &str) -> bool {
        self.js(
            "const e = document.querySelector(arguments[0]); \
             return !!e && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';",
            vec![json!(css)],
        )
        .await
            == Value::Bool(true)
    }

    /// Whether the control `css` is disabled now.
    pub async fn disabled(&self, css: &str) -> bool {
        !self.find(css).await.is_enabled().await.unwrap()
    }

    /// Waits until the control `css` is enabled (or disabled, with `enabled: false`).
    pub async fn until_enabled(&self, css: &str, enabled: bool) {
        self.until(
            &format!("`{css}` to be {}", if enabled { "enabled" } else { "disabled" }),
            "const e = document.querySelector(arguments[0]); return !!e && e.disabled === !arguments[1];",
            vec![json!(css), json!(enabled)],
        )
        .await;
    }

    /// Clicks `css` (waited for).
    pub async fn click(&self, css: &str) {
        self.find(css).await.click().await.unwrap();
    }

    /// Types `text` into the field `css` (waited for), after clearing it.
    pub async fn type_into(&self, css: &str, text: &str) {
        let field = self.find(css).await;
        field.clear().await.unwrap();
        field.send_keys(text).await.unwrap();
    }

    /// The id (or tag and classes) of the focused element, for keyboard tests.
    pub async fn focused(&self) -> String {
        self.js(
            "const e = document.activeElement; if (!e) return ''; \
             return e.id ? '#' + e.id : e.tagName.toLowerCase() + (e.className ? '.' + String(e.className).split(' ').join('.') : '');",
            vec![],
        )
        .await
        .as_str()
        .unwrap_or("")
        .to_owned()
    }

    /// Presses and releases each key of `keys` in turn on the keyboard (WebDriver key actions,
    /// sent to whatever has the focus, as a person typing would).
    pub async fn press(&self, keys: &[char]) {
        use fantoccini::actions::{InputSource, KeyAction, KeyActions};
        let mut actions = KeyActions::new("keyboard".to_owned());
        for &key in keys {
            actions = actions
                .then(KeyAction::Down { value: key })
                .then(KeyAction::Up { value: key });
        }
        self.client.perform_actions(actions).await.unwrap();
    }

    /// Types `text` on the keyboard into the focused element.
    pub async fn type_keys(&self, text: &str) {
        let keys: Vec<char> = text.chars().collect();
        self.press(&keys).await;
    }

    /// Presses Tab until `css` has the focus (at most `limit` times); fails otherwise.
    pub async fn tab_to(&self, css: &str, limit: usize) {
        let is_focused = "return document.activeElement === document.querySelector(arguments[0]);";
        for _ in 0..limit {
            if self.js(is_focused, vec![json!(css)]).await == Value::Bool(true) {
                return;
            }
            self.press(&[char::from(fantoccini::key::Key::Tab)]).await;
        }
        assert!(
            self.js(is_focused, vec![json!(css)]).await == Value::Bool(true),
            "{limit} presses of Tab never reached `{css}` (focus is on `{}`)",
            self.focused().await
        );
    }

    /// The page's text and URL, for failure messages.
    pub async fn dump(&self) -> String {
        let url = self
            .client
            .current_url()
            .await
            .map(|url| url.to_string())
            .unwrap_or_default();
        let text = self
            .client
            .execute("return document.body ? document.body.innerText : '';", vec![])
            .await
            .ok()
            .and_then(|value| value.as_str().map(str::to_owned))
            .unwrap_or_default();
        format!("--- page {url}\n{text}\n---")
    }

    /// Saves a screenshot of the viewport as `target/console-screenshots/<name>.png`, and, with
    /// `TENX_UPDATE_SCREENSHOTS=1`, `docs/console/<name>.png` when `docs` is set.
    pub async fn screenshot(&self, name: &str, docs: bool) -> PathBuf {
        let png = self.client.screenshot().await.unwrap();
        assert!(png.starts_with(b"\x89PNG"), "a screenshot is a PNG");
        // The IHDR chunk's width and height are the viewport's.
        let size = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
        let viewport = self.js("return [window.innerWidth, window.innerHeight];", vec![]).await;
        assert_eq!(
            json!([size(16), size(20)]),
            viewport,
            "the screenshot `{name}` is the viewport"
        );
        if docs {
            assert_eq!(
                (size(16), size(20)),
                (WIDTH, HEIGHT),
                "the README's screenshots are {WIDTH}x{HEIGHT}"
            );
        }
        let root = tenx_tests::repo_root();
        let dir = root.join("target/console-screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, &png).unwrap();
        if docs && std::env::var("TENX_UPDATE_SCREENSHOTS").is_ok_and(|value| value == "1") {
            let docs = root.join("docs/console");
            std::fs::create_dir_all(&docs).unwrap();
            std::fs::write(docs.join(format!("{name}.png")), &png).unwrap();
        }
        path
    }
}
