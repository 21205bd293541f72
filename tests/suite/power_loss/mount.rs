//! The power-cut file system as the suite uses it: built, mounted, cut, unmounted; and the writers'
//! processes that a cut kills.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// xorshift64*: the run's choices, repeatable from its seed.
#[derive(Clone)]
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

pub(super) fn cuts() -> usize {
    std::env::var("TIMELINE_POWER_CUTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20)
}

pub(super) fn seed() -> u64 {
    crate::common::seed_from("TIMELINE_POWER_SEED")
}

/// Whether FUSE can be used here. Outside CI a missing piece is one loud line and no test; under
/// `CI=true` it fails the test.
pub(super) fn fuse_ready(test: &str) -> bool {
    let missing: Vec<&str> = [
        (!Path::new("/dev/fuse").exists()).then_some("/dev/fuse"),
        Command::new("fusermount3")
            .arg("--version")
            .output()
            .is_err()
            .then_some("fusermount3 (Debian: apt-get install fuse3)"),
        Command::new("sqlite3")
            .arg("--version")
            .output()
            .is_err()
            .then_some("the sqlite3 shell (Debian: apt-get install sqlite3)"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if missing.is_empty() {
        return true;
    }
    let line = format!(
        "!!! {test} DID NOT RUN: the power-loss tests need {}",
        missing.join(" and ")
    );
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{line}");
    eprintln!("{line}");
    false
}

/// The power-cut file system, built once per test process from its own package.
pub(super) fn powercut() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/powercut");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let out = Command::new(cargo)
            .args([
                "build",
                "--release",
                "--quiet",
                "--locked",
                "--manifest-path",
            ])
            .arg(dir.join("Cargo.toml"))
            .arg("--target-dir")
            .arg(dir.join("target"))
            .output()
            .expect("cargo runs");
        assert!(
            out.status.success(),
            "building tools/powercut failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        dir.join("target/release/powercut")
    })
}

/// A mounted power-cut file system.
pub(super) struct Mount {
    pub(super) process: Option<Child>,
    pub(super) backing: PathBuf,
    pub(super) dir: PathBuf,
    pub(super) socket: PathBuf,
}

pub(super) fn is_mounted(dir: &Path) -> bool {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let dir = dir.to_string_lossy();
    mounts
        .lines()
        .any(|l| l.split(' ').nth(4) == Some(&*dir) && l.contains("powercut"))
}

impl Mount {
    pub(super) fn new(tmp: &Path) -> Mount {
        let mut mount = Mount {
            process: None,
            backing: tmp.join("disk"),
            dir: tmp.join("mnt"),
            socket: tmp.join("control.sock"),
        };
        std::fs::create_dir_all(&mount.backing).unwrap();
        std::fs::create_dir_all(&mount.dir).unwrap();
        mount.start();
        mount
    }

    pub(super) fn start(&mut self) {
        let log = std::fs::File::create(self.dir.with_extension("log")).unwrap();
        let child = Command::new(powercut())
            .arg("mount")
            .arg(&self.backing)
            .arg(&self.dir)
            .arg("--control")
            .arg(&self.socket)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("powercut starts");
        self.process = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while !(is_mounted(&self.dir) && UnixStream::connect(&self.socket).is_ok()) {
            assert!(
                Instant::now() < deadline,
                "powercut did not mount {}: {}",
                self.dir.display(),
                std::fs::read_to_string(self.dir.with_extension("log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub(super) fn cut(&self, seed: u64) -> String {
        let mut stream = UnixStream::connect(&self.socket).expect("the control socket answers");
        writeln!(stream, "cut {seed}").unwrap();
        let mut answer = String::new();
        BufReader::new(stream).read_line(&mut answer).unwrap();
        assert!(answer.starts_with("cut "), "the cut failed: {answer}");
        answer.trim_end().to_string()
    }

    /// Unmount (a power cut as well: nothing unsynced reached the backing directory) and mount again.
    pub(super) fn remount(&mut self) -> String {
        self.unmount();
        self.start();
        "cut by unmounting and mounting again".to_string()
    }

    pub(super) fn unmount(&mut self) {
        for _ in 0..200 {
            let out = Command::new("fusermount3")
                .arg("-u")
                .arg(&self.dir)
                .output()
                .unwrap();
            if out.status.success() || !is_mounted(&self.dir) {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if let Some(mut child) = self.process.take() {
            let deadline = Instant::now() + Duration::from_secs(10);
            while child.try_wait().unwrap().is_none() {
                if Instant::now() > deadline {
                    let _ = child.kill();
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        if is_mounted(&self.dir) {
            let _ = Command::new("fusermount3")
                .arg("-uz")
                .arg(&self.dir)
                .output();
        }
        if let Some(mut child) = self.process.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The writers' processes of one cycle, all killed at the cut.
#[derive(Default)]
pub(super) struct Procs {
    pub(super) stop: AtomicBool,
    pub(super) running: Mutex<Vec<u32>>,
}

impl Procs {
    /// Start `cmd` unless the power is already cut; registered so that the cut kills it.
    pub(super) fn spawn(&self, cmd: &mut Command) -> Option<Child> {
        let mut running = self.running.lock().unwrap();
        if self.stop.load(Ordering::SeqCst) {
            return None;
        }
        let child = cmd.spawn().expect("the binary starts");
        running.push(child.id());
        Some(child)
    }

    /// Run `cmd` to its end (or its kill): its stdout, and whether it exited with 0.
    pub(super) fn run(&self, cmd: &mut Command) -> Option<(String, bool, String)> {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let child = self.spawn(cmd)?;
        let pid = child.id();
        let out = child.wait_with_output().unwrap();
        self.running.lock().unwrap().retain(|&p| p != pid);
        Some((
            String::from_utf8_lossy(&out.stdout).into_owned(),
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ))
    }

    pub(super) fn kill_all(&self) {
        let running = self.running.lock().unwrap();
        self.stop.store(true, Ordering::SeqCst);
        for &pid in running.iter() {
            // SAFETY: kill(2) on a child of this process that is not reaped yet.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
    }

    pub(super) fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}
