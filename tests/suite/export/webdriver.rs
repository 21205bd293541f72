//! A small WebDriver client for the browser tests: starts Debian's chromedriver on a free localhost
//! port, opens one headless Chromium session and speaks the W3C WebDriver JSON protocol over plain
//! HTTP/1.1 with `std::net::TcpStream` (no crate: the few commands the tests use are simple).

use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The browser: TIMELINE_CHROMIUM if set, else Debian's (what .ci/run installs), else the Chrome
/// of GitHub's Ubuntu runners.
fn chromium() -> Option<PathBuf> {
    first_file(&[
        std::env::var_os("TIMELINE_CHROMIUM").map(PathBuf::from),
        Some("/usr/bin/chromium".into()),
        Some("/usr/bin/google-chrome".into()),
    ])
}

/// Its WebDriver: TIMELINE_CHROMEDRIVER if set, else Debian's, else the one GitHub's runners name in
/// CHROMEWEBDRIVER (a directory).
fn chromedriver() -> Option<PathBuf> {
    first_file(&[
        std::env::var_os("TIMELINE_CHROMEDRIVER").map(PathBuf::from),
        Some("/usr/bin/chromedriver".into()),
        std::env::var_os("CHROMEWEBDRIVER").map(|d| Path::new(&d).join("chromedriver")),
    ])
}

fn first_file(candidates: &[Option<PathBuf>]) -> Option<PathBuf> {
    candidates.iter().flatten().find(|p| p.is_file()).cloned()
}

/// What a missing browser means: under CI=true on Linux (where .ci/run installs it) the test fails;
/// elsewhere it says loudly, once, that the browser tests did not run and returns `None`. The page
/// is the same file on every platform, so the Linux run is the one that must not skip them.
pub fn missing(what: &str) -> Option<Session> {
    let message = format!(
        "BROWSER TESTS DID NOT RUN: {what}; install Debian's chromium and chromium-driver (apt-get install chromium chromium-driver), as .ci/run does"
    );
    if cfg!(target_os = "linux") && std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{message}");
    }
    // One line for the whole test binary, not one per test, written to the real standard error
    // (eprintln! in a passing test is captured and never shown).
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        let _ = writeln!(std::io::stderr(), "\n{message}\n");
    });
    None
}

/// One chromedriver process with one browser session; both end on drop.
pub struct Session {
    driver: Child,
    port: u16,
    id: String,
    _profile: PathBuf,
}

const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

impl Session {
    /// Start chromedriver and a headless Chromium whose fresh profile lives in `profile` (under
    /// target/), with a window of `width` x `height`; `None` (after one loud line) when the
    /// browser is not installed.
    pub fn start(profile: &Path, width: u32, height: u32) -> Option<Session> {
        let Some(browser) = chromium() else {
            return missing("/usr/bin/chromium is not installed");
        };
        let Some(chromedriver) = chromedriver() else {
            return missing("/usr/bin/chromedriver is not installed");
        };
        let _ = std::fs::remove_dir_all(profile);
        std::fs::create_dir_all(profile).unwrap();
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let driver = Command::new(&chromedriver)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", chromedriver.display()));
        let mut session = Session {
            driver,
            port,
            id: String::new(),
            _profile: profile.to_path_buf(),
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(status) = session.http("GET", "/status", None)
                && status["value"]["ready"] == true
            {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "chromedriver did not answer on port {port} within 30 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        // As root and without a network, Chromium needs all of these not to hang or exit.
        let args = json!([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            format!("--user-data-dir={}", profile.display()),
            format!("--window-size={width},{height}"),
        ]);
        let created = session
            .http(
                "POST",
                "/session",
                Some(&json!({"capabilities": {"alwaysMatch": {
                    "browserName": "chrome",
                    "goog:chromeOptions": {"binary": browser, "args": args},
                }}})),
            )
            .unwrap_or_else(|e| panic!("chromedriver refused a session: {e}"));
        session.id = created["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {created}"))
            .to_string();
        Some(session)
    }

    /// One HTTP request to chromedriver; the parsed JSON answer, or the error it reported.
    fn http(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Value, String> {
        let mut stream = loop {
            match TcpStream::connect(("127.0.0.1", self.port)) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                other => break other.map_err(|e| e.to_string())?,
            }
        };
        stream
            .set_read_timeout(Some(Duration::from_secs(120)))
            .unwrap();
        let body = body.map(Value::to_string).unwrap_or_default();
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.port,
            body.len()
        );
        stream
            .write_all(request.as_bytes())
            .map_err(|e| e.to_string())?;
        // chromedriver keeps the connection open after its answer: read the head, then exactly the
        // body it announces.
        let mut raw = Vec::new();
        let mut buf = [0u8; 65536];
        let split = loop {
            if let Some(at) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
                break at;
            }
            let got = read_some(&mut stream, &mut buf)?;
            if got == 0 {
                return Err("the connection closed before an HTTP head".into());
            }
            raw.extend_from_slice(&buf[..got]);
        };
        let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
        let length = head.lines().find_map(|line| {
            let (name, value) = line.split_once(':')?;
            (name.trim() == "content-length").then(|| value.trim().parse::<usize>().ok())?
        });
        let mut content = raw[split + 4..].to_vec();
        match length {
            Some(length) => {
                while content.len() < length {
                    let got = read_some(&mut stream, &mut buf)?;
                    if got == 0 {
                        return Err("the connection closed inside an answer".into());
                    }
                    content.extend_from_slice(&buf[..got]);
                }
                content.truncate(length);
            }
            None => {
                stream
                    .read_to_end(&mut content)
                    .map_err(|e| e.to_string())?;
                if head.contains("transfer-encoding: chunked") {
                    content = unchunk(&content);
                }
            }
        }
        let value: Value = serde_json::from_slice(&content)
            .map_err(|e| format!("{e}: {}", String::from_utf8_lossy(&content)))?;
        if head.starts_with("http/1.1 200") {
            Ok(value)
        } else {
            Err(value.to_string())
        }
    }

    /// A command of this session (`path` after /session/<id>); its `value`.
    #[track_caller]
    pub fn command(&self, method: &str, path: &str, body: Value) -> Value {
        let body = (method == "POST").then_some(&body);
        match self.http(method, &format!("/session/{}{path}", self.id), body) {
            Ok(mut answer) => answer["value"].take(),
            Err(e) => panic!("WebDriver {method} {path} failed: {e}"),
        }
    }

    /// Open `file` (a local path).
    pub fn open(&self, file: &Path) {
        let url = format!("file://{}", file.canonicalize().unwrap().display());
        self.command("POST", "/url", json!({ "url": url }));
    }

    /// Run `script` (a function body; `arguments` are `args`) in the page and return its result.
    #[track_caller]
    pub fn run(&self, script: &str, args: Value) -> Value {
        self.command(
            "POST",
            "/execute/sync",
            json!({"script": script, "args": args}),
        )
    }

    /// Wait (up to 60 s) until `script` returns something other than null, false or undefined.
    #[track_caller]
    pub fn wait_for(&self, script: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let value = self.run(script, json!([]));
            if !value.is_null() && value != false {
                return value;
            }
            assert!(Instant::now() < deadline, "timed out waiting for: {script}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The WebDriver reference of the first element matching `css`.
    #[track_caller]
    pub fn find(&self, css: &str) -> String {
        let found = self.command(
            "POST",
            "/element",
            json!({"using": "css selector", "value": css}),
        );
        found[ELEMENT]
            .as_str()
            .unwrap_or_else(|| panic!("no element for {css}: {found}"))
            .to_string()
    }

    /// Click the element matching `css` as a user would.
    #[track_caller]
    pub fn click(&self, css: &str) {
        let element = self.find(css);
        self.command("POST", &format!("/element/{element}/click"), json!({}));
    }

    /// Type `text` into the element matching `css` (WebDriver key codes allowed, e.g. U+E00C Escape).
    #[track_caller]
    pub fn type_into(&self, css: &str, text: &str) {
        let element = self.find(css);
        self.command(
            "POST",
            &format!("/element/{element}/value"),
            json!({ "text": text }),
        );
    }

    /// Make the page see `prefers-color-scheme: dark` (Chromium's DevTools command, through
    /// chromedriver).
    pub fn dark_mode(&self) {
        self.command(
            "POST",
            "/goog/cdp/execute",
            json!({"cmd": "Emulation.setEmulatedMedia", "params": {"features": [{"name": "prefers-color-scheme", "value": "dark"}]}}),
        );
    }

    /// A PNG of the window.
    pub fn screenshot(&self) -> Vec<u8> {
        let value = self.command("GET", "/screenshot", Value::Null);
        base64_decode(value.as_str().unwrap())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if !self.id.is_empty() {
            let _ = self.http("DELETE", &format!("/session/{}", self.id), None);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

fn unchunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = data.windows(2).position(|w| w == b"\r\n") {
        let size =
            usize::from_str_radix(String::from_utf8_lossy(&data[..end]).trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.extend_from_slice(&data[end + 2..end + 2 + size]);
        data = &data[end + 4 + size..];
    }
    out
}

fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let bytes: Vec<u8> = text
        .bytes()
        .filter(|&c| c != b'=' && !c.is_ascii_whitespace())
        .collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for group in bytes.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in group.iter().enumerate() {
            n |= u32::from(value(c)) << (18 - 6 * i);
        }
        out.extend_from_slice(&n.to_be_bytes()[1..group.len()]);
    }
    out
}

impl Session {
    /// Press and release each key of `keys` on whatever has the focus (WebDriver key codes allowed).
    pub fn keys(&self, keys: &str) {
        let mut actions = Vec::new();
        for key in keys.chars() {
            actions.push(json!({"type": "keyDown", "value": key.to_string()}));
            actions.push(json!({"type": "keyUp", "value": key.to_string()}));
        }
        self.command(
            "POST",
            "/actions",
            json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]}),
        );
    }
}

/// One read, again when a signal interrupted it: the suite is one process, and a signal another
/// test's child causes (such as SIGCHLD under a handler) must not fail a browser test.
fn read_some(stream: &mut TcpStream, buf: &mut [u8]) -> Result<usize, String> {
    loop {
        match stream.read(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            other => return other.map_err(|e| e.to_string()),
        }
    }
}
