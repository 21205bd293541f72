//! The `tl` process itself (issue 43, items 5 and 6): how it ends at a bug (a panic, a stack
//! overflow), what it links, and that an acknowledgement it cannot write is not a success.

use crate::common;

use common::Db;
#[cfg(target_os = "linux")]
use common::{Run, TL};
#[cfg(target_os = "linux")]
use std::process::Stdio;

/// What every report of a bug asks (`cli::main`, `cli::start`).
const BUG_ADVICE: &str = "this is a bug in Timeline: please report it, with the command you ran, at https://github.com/timeline-dev/timeline/issues. A change it was making was kept whole or not at all: tl log shows what is stored";

/// A panic in `tl` (a test-only one, `TIMELINE_TEST_CRASH=panic`, in debug builds) ends it with
/// the status of a bug (70) and one JSON error naming the bug and where it happened, not with an
/// abort at the C `main`'s boundary (`SIGABRT`, nothing said).
#[cfg(debug_assertions)]
#[test]
fn a_panic_ends_tl_with_the_status_of_a_bug_and_asks_for_a_report() {
    let mut db = Db::new();
    db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
    db.env("TIMELINE_TEST_CRASH", "panic");
    let run = db.tl(&["log"]);
    let place = run
        .stderr
        .split("panicked at ")
        .nth(1)
        .and_then(|rest| rest.split(": ").next())
        .unwrap_or_default()
        .to_owned();
    assert!(place.starts_with("src/cli/mod.rs:"), "{run:?}");
    run.err(70, &format!(r#"{{"error":"internal error: tl stopped at a bug (panicked at {place}: the test-only panic of TIMELINE_TEST_CRASH=panic); {BUG_ADVICE}"}}"#));
}

/// A stack overflow (a test-only endless recursion, `TIMELINE_TEST_CRASH=stack-overflow`) says so
/// and ends with the status of a bug, although `tl` starts without the runtime that prints Rust's
/// own message (`cli::start`).
#[cfg(all(debug_assertions, target_os = "linux"))]
#[test]
fn a_stack_overflow_says_so() {
    let mut db = Db::new();
    db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
    db.env("TIMELINE_TEST_CRASH", "stack-overflow");
    db.tl(&["log"]).err(
        70,
        &format!(r#"{{"error":"internal error: tl overflowed its stack; {BUG_ADVICE}"}}"#),
    );
}

/// The unwinder is linked into Timeline's own binaries (`libgcc_eh.a`, no `libgcc_s.so.1` loaded)
/// and only into them: this test program, which links the library, loads `libgcc_s` as any Rust
/// program does, so the library gives its users no link arguments.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn only_timelines_own_binaries_link_the_unwinder_in() {
    let loads_libgcc_s = |maps: &str| maps.lines().any(|line| line.contains("/libgcc_s.so"));
    let ours = std::fs::read_to_string("/proc/self/maps").unwrap();
    assert!(
        loads_libgcc_s(&ours),
        "the test program does not load libgcc_s"
    );
    let db = Db::new();
    for bin in [TL, common::TL_MCP] {
        // Each waits on its standard input (a text to append, a request) while its maps are read.
        let mut cmd = db.command(bin);
        cmd.arg("--db").arg(&db.path);
        if bin == TL {
            cmd.args(["append", "--role", "user", "--text", "-"]);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(300));
        let maps = std::fs::read_to_string(format!("/proc/{}/maps", child.id())).unwrap();
        let _ = child.kill();
        let _ = child.wait();
        assert!(maps.contains("/libc.so"), "{bin}: {maps}");
        assert!(!loads_libgcc_s(&maps), "{bin} loads libgcc_s: {maps}");
    }
}

/// `tl` run with its standard output on `/dev/full` (every write fails with "no space left").
#[cfg(target_os = "linux")]
fn to_dev_full(db: &Db, args: &[&str]) -> Run {
    let mut cmd = db.command(TL);
    cmd.arg("--db")
        .arg(&db.path)
        .args(args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create("/dev/full").unwrap());
    Run::from(common::output_of(&mut cmd))
}

on_both_engines! {
    /// A change whose result (the new node's ID) cannot be written to standard output is not a
    /// success: `tl` exits 1 and says on standard error that the change was made and how to see it;
    /// the change is stored. A read, a text view, an exported tree and `--version` that cannot be
    /// written fail too, saying that nothing was changed. (A reader that closed the pipe is still
    /// not an error: `cli::first_contact::…::output_to_a_closed_pipe_ends_quietly`.)
    #[cfg(target_os = "linux")]
    #[test]
    fn output_that_cannot_be_written_is_not_a_success() {
        let db = Db::new();
        db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
        let enospc = "No space left on device (os error 28)";
        to_dev_full(&db, &["append", "--role", "user", "--text", "hello", "--tokens", "1"]).err(
            1,
            &format!(r#"{{"error":"tl append made its change, but its result could not be written to standard output ({enospc}). The change is stored: see it with tl log (or tl branches, tl timelines); running the command again would make it again"}}"#),
        );
        db.tl(&["node", "--node", "n1"]).json();
        let unread = format!(r#"{{"error":"the output could not be written to standard output ({enospc}); nothing was changed. Write it somewhere with room (for example another file or a pipe) and run the command again"}}"#);
        let before = db.bytes();
        for args in [
            &["log"][..],
            &["log", "--format", "text"],
            &["--version"],
            &["completions", "bash"],
        ] {
            to_dev_full(&db, args).err(1, &unread);
        }
        to_dev_full(&db, &["export", "--format", "ascii"]).err(
            1,
            &format!(r#"{{"error":"cannot write the tree to standard output: {enospc}"}}"#),
        );
        to_dev_full(&db, &["export", "--format", "markdown", "--node", "n1"]).err(
            1,
            &format!(r#"{{"error":"cannot write the export to standard output: {enospc}"}}"#),
        );
        assert_eq!(db.bytes(), before, "a read changed the database");
        // The failed append was made once: the log holds it, and nothing else.
        assert_eq!(db.tl(&["log"]).json()["messages"].as_array().unwrap().len(), 1);
    }
}

/// The demo's transcript that cannot be written ends the demo with an error, not exit 0.
#[cfg(target_os = "linux")]
#[test]
fn a_demo_whose_transcript_cannot_be_written_fails() {
    let db = Db::new();
    let demo = db.dir.path().join("demo.json");
    let mut cmd = db.command(TL);
    cmd.args(["demo", "--db"])
        .arg(&demo)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create("/dev/full").unwrap());
    Run::from(common::output_of(&mut cmd)).err(1, r#"{"error":"tl demo could not write its transcript to standard output (No space left on device (os error 28)); run it again with its output going somewhere with room"}"#);
}
