//! The storage engine through the real `tl` binary: locking across processes (S1), the write protocol
//! and its fault points (S2), refusal of damaged files (S3), permissions (S4), derived data and old
//! files (S5, S6), idempotency (I1, I2) and the audit (U1, U2). The SIGKILL test is in
//! `tests/suite/store_crash.rs`.

use crate::common;

use common::{Db, Run, TL, TempDir};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn fixture(name: &str) -> Vec<u8> {
    fs::read(Path::new(ROOT).join("tests/fixtures").join(name)).unwrap()
}

fn schema() -> &'static jsonschema::Validator {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let text = fs::read(Path::new(ROOT).join("generated/schema/database.json")).unwrap();
        let schema: Value = serde_json::from_slice(&text).unwrap();
        jsonschema::validator_for(&schema).expect("the published schema compiles")
    })
}

/// The bytes are a database file that the published JSON Schema accepts.
#[track_caller]
fn assert_schema_valid(bytes: &[u8], what: &str) {
    let value: Value =
        serde_json::from_slice(bytes).unwrap_or_else(|e| panic!("{what} is not JSON ({e})"));
    let errors: Vec<String> = schema()
        .iter_errors(&value)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not match generated/schema/database.json: {errors:?}"
    );
}

/// The database (in the snapshot format, whichever engine holds it) and its backup (if any) match
/// the schema.
#[track_caller]
fn assert_files_valid(db: &Db) {
    assert_schema_valid(&db.bytes(), "the database");
    if let Ok(bak) = fs::read(db.backup_path()) {
        assert_schema_valid(&bak, "the backup");
    }
}

fn lock_path(db: &Db) -> PathBuf {
    PathBuf::from(format!("{}.lock", db.path.display()))
}

/// Run `tl --db <db> <args>` with extra environment variables.
fn tl_env(db: &Db, env: &[(&str, &str)], args: &[&str]) -> Run {
    let mut cmd = db.command(TL);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd
        .arg("--db")
        .arg(&db.path)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    Run::from(out)
}

/// A database with one timeline and two messages; the second write left a backup.
fn small_db() -> Db {
    let db = Db::new();
    db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
    db.tl(&[
        "append", "--role", "user", "--text", "first", "--tokens", "3",
    ])
    .ok(r#"{"node":"n1"}"#);
    db.tl(&[
        "append",
        "--role",
        "assistant",
        "--text",
        "second",
        "--tokens",
        "4",
    ])
    .ok(r#"{"node":"n2"}"#);
    db
}

/// A database in a fresh directory holding these bytes (and a backup when given).
fn db_with(bytes: &[u8], backup: Option<&[u8]>) -> Db {
    // Snapshot bytes: a JSON database whatever engine the test runs on.
    let mut db = Db::new();
    db.path = db.dir.path().join("db.json");
    fs::write(&db.path, bytes).unwrap();
    if let Some(backup) = backup {
        fs::write(db.backup_path(), backup).unwrap();
    }
    db
}

/// The exact stderr line for a database that is refused (S3), as `FileStore::corrupt` words it.
fn refused(db: &Db, problem: &str) -> String {
    let p = db.path.display().to_string();
    let bak = db.backup_path().display().to_string();
    let restore = if db.backup_path().exists() {
        format!("then restore the previous snapshot: cp \"{bak}\" \"{p}\"")
    } else {
        format!(
            "no backup {bak} exists, so repair the file by hand or start a new database with --db"
        )
    };
    json!({
        "error": format!(
            "the database {p} cannot be used: {problem}. Nothing was changed and nothing will be written to it. To recover: stop every tl and tl-mcp process that uses it, keep a copy of the damaged file (cp \"{p}\" \"{p}.corrupt\"), {restore}"
        )
    })
    .to_string()
}

/// Every command refuses the file with exactly this problem, exit 3, and neither the database nor
/// the backup changes, for reads and for writes.
#[track_caller]
fn assert_refused(db: &Db, problem: &str) {
    let before = db.bytes();
    let bak_before = fs::read(db.backup_path()).ok();
    let expected = refused(db, problem);
    let commands: [&[&str]; 5] = [
        &["branches"],
        &["context", "--node", "n1"],
        &["append", "--role", "user", "--text", "lost?"],
        &[
            "--idempotency-key",
            "k",
            "append",
            "--role",
            "user",
            "--text",
            "lost?",
        ],
        &["create"],
    ];
    for args in commands {
        db.tl(args).err(3, &expected);
        assert_eq!(
            db.bytes(),
            before,
            "tl {args:?} changed the refused database"
        );
        assert_eq!(
            fs::read(db.backup_path()).ok(),
            bak_before,
            "tl {args:?} changed the backup"
        );
    }
}

fn set(value: &mut Value, pointer: &str, new: Value) {
    *value
        .pointer_mut(pointer)
        .unwrap_or_else(|| panic!("no {pointer}")) = new;
}

fn to_bytes(value: &Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).unwrap();
    bytes.push(b'\n');
    bytes
}

fn full_fixture() -> Value {
    serde_json::from_slice(&fixture("v1-full.json")).unwrap()
}

/// Index of node `id` in the hot zone of tl0 of the full fixture.
fn hot_index(file: &Value, id: &str) -> usize {
    file["timelines"][0]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .position(|n| n["id"] == id)
        .unwrap()
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Something that changes whenever the file is replaced: (inode, mtime) on Unix, mtime elsewhere.
/// A server database has no file to replace (what it holds is compared through `Db::bytes`).
fn identity(path: &Path) -> (u64, std::time::SystemTime) {
    if timeline::store::is_uri(&path.to_string_lossy()) {
        return (0, std::time::UNIX_EPOCH);
    }
    let meta = fs::metadata(path).unwrap();
    #[cfg(unix)]
    let ino = std::os::unix::fs::MetadataExt::ino(&meta);
    #[cfg(not(unix))]
    let ino = 0;
    (ino, meta.modified().unwrap())
}

/// Files in the database's directory other than the database, backup and lock.
fn leftovers(db: &Db) -> Vec<PathBuf> {
    let with = |suffix: &str| PathBuf::from(format!("{}{suffix}", db.path.display()));
    let keep = [
        db.path.clone(),
        db.backup_path(),
        lock_path(db),
        with("-wal"),
        with("-shm"),
    ];
    let mut found: Vec<PathBuf> = fs::read_dir(db.dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !keep.contains(p))
        .collect();
    found.sort();
    found
}

// ---------------------------------------------------------------------------------------------
// S1: locking across independent processes
// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// S2, S4: the write protocol, backups and permissions
// ---------------------------------------------------------------------------------------------

#[test]
fn s2_backup_is_the_previous_snapshot_byte_for_byte() {
    let db = Db::new();
    db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
    assert!(!db.backup_path().exists(), "the first write has no backup");
    assert_files_valid(&db);
    let steps: [&[&str]; 6] = [
        &["append", "--role", "user", "--text", "one", "--tokens", "2"],
        &[
            "append",
            "--role",
            "assistant",
            "--text",
            "two",
            "--tokens",
            "3",
        ],
        &["fork", "--node", "n1", "--name", "other"],
        &["pin", "--node", "n2"],
        &[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n2",
            "--summary",
            "both",
            "--tokens",
            "1",
        ],
        &["create"],
    ];
    for args in steps {
        let before = db.bytes();
        let run = db.tl(args);
        assert_eq!(run.code, 0, "{run:?}");
        assert_eq!(
            fs::read(db.backup_path()).unwrap(),
            before,
            "after tl {args:?}"
        );
        assert_ne!(db.bytes(), before, "tl {args:?} changed nothing");
        assert_files_valid(&db);
    }
    assert_eq!(leftovers(&db), Vec::<PathBuf>::new());
}

#[test]
fn s2_reads_never_write() {
    let db = small_db();
    let (bytes, bak, id) = (
        db.bytes(),
        fs::read(db.backup_path()).unwrap(),
        identity(&db.path),
    );
    db.tl(&["branches"]).json();
    db.tl(&["context", "--node", "n2"]).json();
    db.tl(&["node", "--node", "n1"]).json();
    db.tl(&["budget", "--node", "n2", "--max", "100"]).json();
    db.tl(&["archive-check", "--name", "main"]).json();
    assert_eq!(
        (
            db.bytes(),
            fs::read(db.backup_path()).unwrap(),
            identity(&db.path)
        ),
        (bytes, bak, id)
    );
    assert_files_valid(&db);
}

#[cfg(unix)]
#[test]
fn s4_database_backup_and_lock_are_private() {
    let db = small_db();
    for path in [db.path.clone(), db.backup_path(), lock_path(&db)] {
        assert_eq!(mode(&path), 0o600, "{}", path.display());
    }
    // A database someone made world-readable becomes private again with the next write, because the
    // new snapshot is a new private file.
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&db.path, fs::Permissions::from_mode(0o644)).unwrap();
    db.tl(&["append", "--role", "user", "--text", "third"])
        .ok(r#"{"node":"n3"}"#);
    assert_eq!(mode(&db.path), 0o600);
    assert_eq!(mode(&db.backup_path()), 0o600);
    assert_files_valid(&db);
}

/// A file's DACL read back through the Windows API, described: whether it is protected (inherits
/// nothing from its directory) and each entry, with the current user named as such.
#[cfg(windows)]
fn dacl(path: &Path) -> String {
    use std::os::windows::ffi::OsStrExt;
    use std::ptr::null_mut;
    use windows_sys::Win32::Foundation::{CloseHandle, ERROR_SUCCESS, HANDLE, LocalFree};
    use windows_sys::Win32::Security::Authorization::{GetNamedSecurityInfoW, SE_FILE_OBJECT};
    use windows_sys::Win32::Security::{
        ACCESS_ALLOWED_ACE, ACL, DACL_SECURITY_INFORMATION, EqualSid, GetAce,
        GetSecurityDescriptorControl, GetTokenInformation, PSECURITY_DESCRIPTOR, SE_DACL_PROTECTED,
        TOKEN_QUERY, TOKEN_USER, TokenUser,
    };
    use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};
    let wide: Vec<u16> = path.as_os_str().encode_wide().chain([0]).collect();
    // SAFETY: every out-pointer points to a local of the right type; the buffers the API allocates
    // are freed with LocalFree, the token handle is closed, and the ACEs are read inside the DACL.
    unsafe {
        let mut token: HANDLE = null_mut();
        assert_ne!(
            OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token),
            0
        );
        let mut needed = 0u32;
        GetTokenInformation(token, TokenUser, null_mut(), 0, &mut needed);
        let mut user = vec![0u64; (needed as usize).div_ceil(8)];
        let got = GetTokenInformation(
            token,
            TokenUser,
            user.as_mut_ptr().cast(),
            needed,
            &mut needed,
        );
        CloseHandle(token);
        assert_ne!(got, 0);
        let me = (*(user.as_ptr() as *const TOKEN_USER)).User.Sid;

        let mut acl: *mut ACL = null_mut();
        let mut descriptor: PSECURITY_DESCRIPTOR = null_mut();
        let status = GetNamedSecurityInfoW(
            wide.as_ptr(),
            SE_FILE_OBJECT,
            DACL_SECURITY_INFORMATION,
            null_mut(),
            null_mut(),
            &mut acl,
            null_mut(),
            &mut descriptor,
        );
        assert_eq!(status, ERROR_SUCCESS, "{}", path.display());
        let (mut control, mut revision) = (0u16, 0u32);
        assert_ne!(
            GetSecurityDescriptorControl(descriptor, &mut control, &mut revision),
            0
        );
        let mut out = String::from(if control & SE_DACL_PROTECTED != 0 {
            "protected"
        } else {
            "inherits"
        });
        let count = if acl.is_null() { 0 } else { (*acl).AceCount };
        for i in 0..u32::from(count) {
            let mut ace = null_mut();
            assert_ne!(GetAce(acl, i, &mut ace), 0);
            let ace = &*(ace as *const ACCESS_ALLOWED_ACE);
            // Type 0 is ACCESS_ALLOWED_ACE_TYPE; the SID starts at SidStart.
            let sid = (&raw const ace.SidStart).cast_mut().cast();
            let who = if EqualSid(sid, me) != 0 {
                "me"
            } else {
                "someone else"
            };
            // GENERIC_ALL as set, or FILE_ALL_ACCESS once the system mapped it: both are full access.
            let mask = match ace.Mask {
                0x1000_0000 | 0x001f_01ff => "full access".to_string(),
                other => format!("mask {other:#x}"),
            };
            out.push_str(&format!("; type {} {mask} to {who}", ace.Header.AceType));
        }
        LocalFree(descriptor.cast());
        out
    }
}

/// On Windows "private" is a protected DACL with one entry: full access for the user who made the
/// file, nothing inherited from the directory. (Wine does not keep a file's DACL, so these tests run
/// on Windows only: docs/contributing.md.)
#[cfg(windows)]
const OWNER_ONLY: &str = "protected; type 0 full access to me";

#[cfg(windows)]
#[test]
fn s4_database_backup_and_lock_are_owner_only_on_windows() {
    let db = small_db();
    for path in [db.path.clone(), db.backup_path(), lock_path(&db)] {
        assert_eq!(dacl(&path), OWNER_ONLY, "{}", path.display());
    }
    // Every write makes a new private snapshot, so it stays private.
    db.tl(&["append", "--role", "user", "--text", "third"])
        .ok(r#"{"node":"n3"}"#);
    for path in [db.path.clone(), db.backup_path()] {
        assert_eq!(dacl(&path), OWNER_ONLY, "{}", path.display());
    }
    assert_files_valid(&db);
}

#[cfg(unix)]
#[test]
fn s1_a_symlinked_database_is_written_through_the_link() {
    let db = small_db();
    let link = db.dir.path().join("link.json");
    std::os::unix::fs::symlink(&db.path, &link).unwrap();
    let run = db
        .command(TL)
        .arg("--db")
        .arg(&link)
        .args(["append", "--role", "user", "--text", "via link"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(run.stdout).unwrap(),
        "{\"node\":\"n3\"}\n"
    );
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link was replaced by a file"
    );
    db.tl(&["branches"])
        .ok(r#"[{"name":"main","head":"n3","current":true}]"#);
    assert!(!db.dir.path().join("link.json.bak").exists());
    assert_files_valid(&db);
}

// ---------------------------------------------------------------------------------------------
// S2: fault injection at every step of a write
// ---------------------------------------------------------------------------------------------

const STEPS: [&str; 5] = [
    "temp_written",
    "temp_synced",
    "backup_written",
    "replaced",
    "dir_synced",
];

/// Copy the database and backup of `db` into a fresh directory.
fn copy_of(db: &Db) -> Db {
    let copy = Db::new();
    if db.path.exists() {
        fs::copy(&db.path, &copy.path).unwrap();
    }
    if db.backup_path().exists() {
        fs::copy(db.backup_path(), copy.backup_path()).unwrap();
    }
    copy
}

#[test]
fn s2_fault_at_every_step_leaves_the_state_before_or_after() {
    let env_now = ("TIMELINE_NOW", "1767225600");
    let mutation: &[&str] = &[
        "--idempotency-key",
        "fault-1",
        "summarize",
        "--from",
        "n1",
        "--to",
        "n2",
        "--summary",
        "S",
        "--tokens",
        "2",
    ];
    for step in STEPS {
        let db = small_db();
        let before = db.bytes();
        let bak_before = fs::read(db.backup_path()).unwrap();
        // The same mutation without a fault gives the state after.
        let reference = copy_of(&db);
        tl_env(&reference, &[env_now], mutation).ok(r#"{"node":"n3"}"#);
        let after = reference.bytes();

        let run = tl_env(&db, &[env_now, ("TIMELINE_FAULT_STEP", step)], mutation);
        assert_ne!(
            run.code, 0,
            "{step}: the process should have aborted: {run:?}"
        );
        assert_eq!(run.stdout, "", "{step}: no success may be reported");

        let now = db.bytes();
        let expect_after = matches!(step, "replaced" | "dir_synced");
        assert_eq!(
            now,
            if expect_after {
                after.clone()
            } else {
                before.clone()
            },
            "{step}"
        );
        // The backup is a valid earlier snapshot: the one before the mutation once it was written,
        // the older one before that.
        let bak = fs::read(db.backup_path()).unwrap();
        // (The backup is staged beside the new snapshot and renamed into place only after it.)
        let expected_bak = if matches!(step, "temp_written" | "temp_synced" | "backup_written") {
            &bak_before
        } else {
            &before
        };
        assert_eq!(&bak, expected_bak, "{step}: backup");
        let bak_db = db_with(&bak, None);
        bak_db.tl(&["branches"]).json();
        assert_files_valid(&db);

        // A temporary file left by the dead writer is private, and the next write removes it.
        let left = leftovers(&db);
        if step == "backup_written" {
            assert_eq!(
                left.len(),
                2,
                "{step}: the new snapshot and the backup: {left:?}"
            );
        } else if matches!(step, "temp_written" | "temp_synced") {
            assert_eq!(left.len(), 1, "{step}: {left:?}");
        } else {
            assert_eq!(left, Vec::<PathBuf>::new(), "{step}");
        }
        #[cfg(unix)]
        for path in &left {
            assert_eq!(mode(path), 0o600, "{step}: {}", path.display());
        }

        // The database works: the same request either replays (it had committed) or runs now.
        tl_env(&db, &[env_now], mutation).ok(r#"{"node":"n3"}"#);
        assert_eq!(db.bytes(), after, "{step}: retry");
        db.tl(&["append", "--role", "user", "--text", "next"])
            .ok(r#"{"node":"n4"}"#);
        assert_eq!(
            leftovers(&db),
            Vec::<PathBuf>::new(),
            "{step}: leftovers were not cleaned"
        );
    }
}

/// Every file beside the database (names and bytes), the lock file left out.
fn files_of(db: &Db) -> Vec<(String, Vec<u8>)> {
    common::names_in(db.dir.path())
        .into_iter()
        .filter(|n| !n.ends_with(".lock"))
        .map(|n| {
            let bytes = fs::read(db.dir.path().join(&n)).unwrap();
            (n, bytes)
        })
        .collect()
}

/// #42 item 6: a write that fails, at whichever step the disk fills, leaves every file as it was:
/// the database, its backup, no temporary file (and a first write nothing at all). Before, the
/// backup was renamed into place ahead of the database, so a failure between the two left a
/// changed `.bak`. A failure of the backup's own rename, after the commit, keeps the change and the
/// older backup.
#[test]
fn s2_a_full_disk_at_any_step_of_a_write_changes_no_file() {
    // As JSON, so that a Windows path's backslashes are escaped as `tl` writes them.
    let full = |db: &Db| {
        json!({"error": format!(
            "cannot write the database {} (it was left as it was): No space left on device (TIMELINE_FAULT_ERROR) (the disk is full: free some space and try again)",
            db.path.display()
        )})
        .to_string()
    };
    for step in ["temp_written", "backup_written", "replaced"] {
        let db = small_db();
        let before = files_of(&db);
        assert_eq!(
            before.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(),
            ["db.json", "db.json.bak"]
        );
        tl_env(
            &db,
            &[("TIMELINE_FAULT_ERROR", step)],
            &["append", "--role", "user", "--text", "x"],
        )
        .err(3, &full(&db));
        assert_eq!(files_of(&db), before, "{step}");
        // The first write of a new database (which has no backup to stage) leaves nothing but
        // the lock file.
        if step == "backup_written" {
            continue;
        }
        let new = Db::new();
        tl_env(&new, &[("TIMELINE_FAULT_ERROR", step)], &["create"]).err(3, &full(&new));
        assert_eq!(common::names_in(new.dir.path()), ["db.json.lock"], "{step}");
        new.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
    }
    let db = small_db();
    let bak_before = fs::read(db.backup_path()).unwrap();
    tl_env(
        &db,
        &[("TIMELINE_FAULT_ERROR", "backup_replaced")],
        &["append", "--role", "user", "--text", "x"],
    )
    .ok(r#"{"node":"n3"}"#);
    assert_eq!(fs::read(db.backup_path()).unwrap(), bak_before);
    assert_eq!(leftovers(&db), Vec::<PathBuf>::new());
    db.tl(&["context", "--node", "n3"]).json();
}

/// #42 item 6 on a real limit: every command of a short session runs under each file size limit
/// (RLIMIT_FSIZE, which fails a write past it with EFBIG, as a full disk fails it, without root or
/// a small file system), and whenever one fails, it changed no file.
#[test]
#[cfg(target_os = "linux")]
fn s2_a_file_size_limit_at_any_size_changes_no_file() {
    use std::os::unix::process::CommandExt;
    let text = "y".repeat(1500);
    let session: [&[&str]; 5] = [
        &["create", "--title", "limits"],
        &["append", "--role", "user", "--text", &text],
        &["append", "--role", "assistant", "--text", "short"],
        &["fork", "--node", "n1", "--name", "side"],
        &["drop-branch", "--name", "side"],
    ];
    let mut failures = 0;
    for limit in (0..=3_000).step_by(100) {
        let db = Db::new();
        for args in session {
            let before = files_of(&db);
            let mut cmd = db.command(TL);
            cmd.arg("--db")
                .arg(&db.path)
                .args(args)
                .stdin(Stdio::null());
            // SAFETY: only async-signal-safe calls between fork and exec.
            unsafe {
                cmd.pre_exec(move || {
                    libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                    let rl = libc::rlimit {
                        rlim_cur: limit,
                        rlim_max: limit,
                    };
                    if libc::setrlimit(libc::RLIMIT_FSIZE, &rl) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
            let run = Run::from(cmd.output().unwrap());
            if run.code != 0 {
                failures += 1;
                assert_eq!(run.code, 3, "{args:?} at {limit} bytes: {run:?}");
                assert!(
                    run.stderr.contains("File too large (os error 27) (the file would be larger than this process may write"),
                    "{args:?} at {limit} bytes: {run:?}"
                );
                assert_eq!(files_of(&db), before, "{args:?} at {limit} bytes");
                break;
            }
        }
    }
    // (A session's snapshot grows to about 2.6 KB: the limits below that stop it at some command.)
    assert!(
        failures >= 20,
        "the limits should stop most sessions ({failures})"
    );
}

#[test]
fn s2_fault_during_the_first_write_leaves_no_database_or_a_complete_one() {
    for step in STEPS {
        let db = Db::new();
        let run = tl_env(&db, &[("TIMELINE_FAULT_STEP", step)], &["create"]);
        match step {
            "temp_written" | "temp_synced" => {
                assert_ne!(run.code, 0, "{step}");
                assert!(!db.path.exists(), "{step}");
            }
            // The first write has no previous snapshot, so there is no backup step to abort at.
            "backup_written" => {
                run.ok(r#"{"timeline_id":"tl0"}"#);
            }
            _ => assert_ne!(run.code, 0, "{step}"),
        }
        assert!(
            !db.backup_path().exists(),
            "{step}: the first write has no backup"
        );
        if db.path.exists() {
            db.tl(&["branches"])
                .ok(r#"[{"name":"main","head":"n0","current":true}]"#);
            assert_files_valid(&db);
        } else {
            db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// S3: refusal and recovery
// ---------------------------------------------------------------------------------------------

#[test]
fn s3_invalid_json_is_refused_and_nothing_is_written() {
    let good = small_db();
    let db = db_with(
        b"{\"format_version\": 1, \"timelines\": [}\n",
        Some(&good.bytes()),
    );
    assert_refused(
        &db,
        "it is not valid JSON (expected value at line 1 column 37)",
    );
}

#[test]
fn s3_truncated_file_is_refused() {
    let good = small_db();
    let bytes = good.bytes();
    let db = db_with(
        &bytes[..bytes.len() / 2],
        Some(&fs::read(good.backup_path()).unwrap()),
    );
    assert_refused(
        &db,
        "the file is truncated (EOF while parsing a value at line 23 column 7)",
    );
}

#[test]
fn s3_empty_file_is_refused() {
    let db = db_with(b"", None);
    assert_refused(&db, "the file is empty (0 bytes, no JSON)");
}

#[test]
fn s3_unsupported_format_version_is_refused() {
    let mut file = full_fixture();
    set(&mut file, "/format_version", json!(3));
    let db = db_with(&to_bytes(&file), Some(&fixture("v1-full.json")));
    assert_refused(
        &db,
        "unsupported format_version 3 (this version of Timeline reads format_version 1 to 2; use the release that wrote it)",
    );
    let db = db_with(b"{\"timelines\": []}\n", None);
    assert_refused(
        &db,
        "format_version is missing or not a number, so this is not a Timeline database",
    );
}

#[test]
fn s3_invalid_structure_is_refused() {
    type Damage = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(&str, Damage)> = vec![
        (
            "invalid structure (unknown field `extra`, expected one of `format_version`, `next_timeline`, `timelines`, `idempotency`, `audit`, `imports`)",
            Box::new(|f| f["extra"] = json!(true)),
        ),
        (
            "invalid structure (invalid type: integer `1`, expected struct TimelineFile)",
            Box::new(|f| f["timelines"] = json!([1])),
        ),
        (
            "invalid structure (missing field `text`)",
            Box::new(|f| {
                let i = hot_index(f, "n2");
                f["timelines"][0]["nodes"][i]
                    .as_object_mut()
                    .unwrap()
                    .remove("text");
            }),
        ),
        (
            "invalid structure (invalid type: integer `7`, expected a string)",
            Box::new(|f| {
                let i = hot_index(f, "n2");
                set(f, &format!("/timelines/0/nodes/{i}/intent/tag"), json!(7));
            }),
        ),
        (
            "invalid content (timeline tl0: node n2 has parent n5 that is not older than it)",
            Box::new(|f| {
                let i = hot_index(f, "n2");
                set(f, &format!("/timelines/0/nodes/{i}/parent"), json!("n5"));
            }),
        ),
        (
            "invalid content (timeline tl0: next_node 12 does not match the 12 stored nodes)",
            Box::new(|f| set(f, "/timelines/0/next_node", json!(12))),
        ),
        (
            "invalid content (timeline tl0: current branch \"gone\" does not exist)",
            Box::new(|f| set(f, "/timelines/0/current_branch", json!("gone"))),
        ),
        (
            "invalid content (timeline tl0: node n3 has an invalid role \"robot\")",
            Box::new(|f| set(f, "/timelines/0/cold/0/role", json!("robot"))),
        ),
        (
            "invalid content (timeline tl0: summary n10 has version 5, which does not follow its supersede chain)",
            Box::new(|f| {
                let i = hot_index(f, "n10");
                set(
                    f,
                    &format!("/timelines/0/nodes/{i}/summary/version"),
                    json!(5),
                );
            }),
        ),
        (
            "invalid content (timeline tl0: summary n9 refers to n10 which is not an older summary)",
            Box::new(|f| {
                let i = hot_index(f, "n9");
                f["timelines"][0]["nodes"][i]["summary"]["derived_from"] = json!(["n10"]);
            }),
        ),
        (
            "invalid content (timeline tl0: summary n9 is superseded twice (by n10 and n11))",
            Box::new(|f| {
                let i = hot_index(f, "n11");
                f["timelines"][0]["nodes"][i]["summary"]["supersedes"] = json!("n9");
                f["timelines"][0]["nodes"][i]["summary"]["version"] = json!(2);
            }),
        ),
        (
            "invalid content (audit timestamps decrease)",
            Box::new(|f| set(f, "/audit/0/ts", json!(1767225601))),
        ),
        (
            "invalid content (timeline tl0: invalid archived branch name \"a/b\")",
            Box::new(|f| {
                archived_record(
                    f,
                    json!({"name": "a/b", "head": "n3", "watermark": "n3", "position": 2, "nodes": ["n3"]}),
                )
            }),
        ),
        (
            "invalid content (timeline tl0: archived branch head \"n99\" is not a node of this timeline)",
            Box::new(|f| {
                archived_record(
                    f,
                    json!({"name": "side", "head": "n99", "watermark": "n3", "position": 2, "nodes": ["n3"]}),
                )
            }),
        ),
        (
            "invalid content (timeline tl0: the watermark of archived branch \"side\" is not on its path)",
            Box::new(|f| {
                archived_record(
                    f,
                    json!({"name": "side", "head": "n3", "watermark": "n7", "position": 2, "nodes": ["n3"]}),
                )
            }),
        ),
        (
            "invalid content (timeline tl0: the watermark of archived branch \"late\" (n12) covers n7, which is neither pinned nor summarised)",
            Box::new(|f| {
                archived_record(
                    f,
                    json!({"name": "late", "head": "n12", "watermark": "n12", "position": 0, "nodes": []}),
                )
            }),
        ),
        (
            "invalid content (timeline tl0: archived branch \"side\" lists n4, which is a summary or not on its path)",
            Box::new(|f| {
                archived_record(
                    f,
                    json!({"name": "side", "head": "n3", "watermark": "n3", "position": 2, "nodes": ["n4"]}),
                )
            }),
        ),
        (
            "invalid structure (missing field `position`)",
            Box::new(|f| {
                archived_record(
                    f,
                    json!({"name": "side", "head": "n3", "watermark": "n3", "nodes": ["n3"]}),
                )
            }),
        ),
    ];
    for (problem, damage) in cases {
        let mut file = full_fixture();
        damage(&mut file);
        let db = db_with(&to_bytes(&file), Some(&fixture("v1-full.json")));
        assert_refused(&db, problem);
    }
}

/// Give the fixture's timeline one record of an archived branch.
fn archived_record(file: &mut Value, record: Value) {
    file["timelines"][0]["archived_branches"] = json!([record]);
}

/// The fixture's "side" branch was archived before archival kept a record: restore cannot find it,
/// and says why, changing nothing.
#[test]
fn a3_a_branch_archived_without_a_record_cannot_be_restored() {
    let bytes = fixture("v1-full.json");
    let db = db_with(&bytes, None);
    db.tl(&["restore-branch", "--branch", "side"]).err(
        1,
        r#"{"error":"no archived branch \"side\" in timeline tl0 (none is archived; a branch archived by a version of Timeline without restore-branch was not recorded and cannot be restored, but its messages stay readable by node ID)"}"#,
    );
    assert_eq!(db.bytes(), bytes);
}

/// A file with a record of an archived branch loads, encodes to the same bytes, and restores it.
#[test]
fn a3_a_record_of_an_archived_branch_round_trips_and_restores() {
    let mut file = full_fixture();
    archived_record(
        &mut file,
        json!({"name": "side", "head": "n3", "watermark": "n3", "position": 1, "nodes": ["n3"]}),
    );
    set(
        &mut file,
        "/format_version",
        json!(timeline::spec::spec().constants.format_version),
    );
    let bytes = to_bytes(&file);
    let mut db = db_with(&bytes, None);
    at(&mut db, T0 + 100);
    db.tl(&["pin", "--node", "n6"]).ok(r#"{"pinned":"n6"}"#);
    assert_eq!(db.bytes(), bytes, "decode then encode is the identity");
    db.tl(&["restore-branch", "--branch", "side"])
        .ok(r#"{"branch":"side","head":"n3","restored":["n3"]}"#);
    db.tl(&["branches"]).ok(concat!(
        r#"[{"name":"main","head":"n12","current":true},{"name":"side","head":"n3","current":false},"#,
        r#"{"name":"alt","head":"n7","current":false}]"#
    ));
    let written = db.value();
    assert!(written["timelines"][0].get("archived_branches").is_none());
    assert!(
        written["timelines"][0]
            .get("cold")
            .is_none_or(|c| c == &json!([]))
    );
    assert_eq!(
        written["audit"].as_array().unwrap().last().unwrap(),
        &json!({"ts": T0 + 100, "op": "restore", "timeline": "tl0", "branch": "side", "nodes": ["n3"]})
    );
    // Converted to SQLite and back, the record survives.
    let mut file = full_fixture();
    archived_record(
        &mut file,
        json!({"name": "side", "head": "n3", "watermark": "n3", "position": 1, "nodes": ["n3"]}),
    );
    let db = db_with(&to_bytes(&file), None);
    let sqlite = db.dir.path().join("copy.db");
    let back = db.dir.path().join("back.json");
    db.tl(&["db", "convert", "--to", sqlite.to_str().unwrap()])
        .json();
    let copy = Db {
        path: sqlite,
        dir: TempDir::new(),
        env: Vec::new(),
    };
    copy.tl(&["db", "convert", "--to", back.to_str().unwrap()])
        .json();
    assert_eq!(
        serde_json::from_slice::<Value>(&fs::read(&back).unwrap()).unwrap()["timelines"][0]["archived_branches"],
        json!([{"name": "side", "head": "n3", "watermark": "n3", "position": 1, "nodes": ["n3"]}])
    );
    copy.tl(&["restore-branch", "--branch", "side"])
        .ok(r#"{"branch":"side","head":"n3","restored":["n3"]}"#);
}

#[test]
fn s5_an_invalid_intent_is_refused_in_both_zones() {
    let mut file = full_fixture();
    let i = hot_index(&file, "n2");
    set(
        &mut file,
        &format!("/timelines/0/nodes/{i}/intent/tag"),
        json!(""),
    );
    let db = db_with(&to_bytes(&file), None);
    assert_refused(
        &db,
        "invalid content (timeline tl0: node n2 has an invalid intent: the tag must be a non-empty string)",
    );

    let mut file = full_fixture();
    file["timelines"][0]["cold"][0]["intent"] = json!({"tag": "", "note": "n"});
    let db = db_with(&to_bytes(&file), None);
    assert_refused(
        &db,
        "invalid content (timeline tl0: node n3 has an invalid intent: the tag must be a non-empty string)",
    );

    let mut file = full_fixture();
    file["timelines"][0]["cold"][0]["intent"] = json!({"note": "no tag"});
    let db = db_with(&to_bytes(&file), None);
    assert_refused(&db, "invalid structure (missing field `tag`)");
}

#[test]
fn s3_the_recovery_steps_in_the_message_work() {
    let db = small_db();
    let good_backup = fs::read(db.backup_path()).unwrap();
    fs::write(&db.path, b"{ damaged").unwrap();
    let run = db.tl(&["branches"]);
    assert_eq!(run.code, 3);
    // Follow the message: keep the damaged copy, restore the backup.
    let corrupt = PathBuf::from(format!("{}.corrupt", db.path.display()));
    fs::copy(&db.path, &corrupt).unwrap();
    fs::copy(db.backup_path(), &db.path).unwrap();
    db.tl(&["branches"])
        .ok(r#"[{"name":"main","head":"n1","current":true}]"#);
    assert_eq!(fs::read(&corrupt).unwrap(), b"{ damaged");
    db.tl(&["append", "--role", "user", "--text", "again"])
        .ok(r#"{"node":"n2"}"#);
    assert_eq!(fs::read(db.backup_path()).unwrap(), good_backup);
    assert_files_valid(&db);
}

// ---------------------------------------------------------------------------------------------
// S5, S6: derived data is rebuilt; old files are completed
// ---------------------------------------------------------------------------------------------

#[test]
fn s5_tampered_derived_fields_are_rebuilt_and_fixed_by_the_next_write() {
    let pristine = full_fixture();
    let mut file = pristine.clone();
    let n5 = hot_index(&file, "n5");
    let n7 = hot_index(&file, "n7");
    let n9 = hot_index(&file, "n9");
    let n11 = hot_index(&file, "n11");
    set(
        &mut file,
        &format!("/timelines/0/nodes/{n5}/prefix_tokens"),
        json!(999),
    );
    set(
        &mut file,
        &format!("/timelines/0/nodes/{n7}/prefix_tokens"),
        json!("a string"),
    );
    set(
        &mut file,
        &format!("/timelines/0/nodes/{n9}/stale"),
        json!(true),
    );
    set(
        &mut file,
        &format!("/timelines/0/nodes/{n11}/stale"),
        json!(false),
    );
    set(&mut file, "/timelines/0/cold/0/prefix_tokens", json!(-1));
    let n1 = hot_index(&file, "n1");
    file["timelines"][0]["nodes"][n1]["prefix_tokens"] = Value::Null;
    let tampered = to_bytes(&file);
    let db = db_with(&tampered, None);

    // Reads see the rebuilt values and write nothing.
    let node = |id: &str| db.tl(&["node", "--node", id]).json();
    assert_eq!(node("n7")["path_tokens"], 129);
    assert_eq!(node("n5")["path_tokens"], 49);
    assert_eq!(node("n3")["path_tokens"], 12, "cold zone");
    assert_eq!(node("n9")["summary"]["stale"], false);
    assert_eq!(node("n11")["summary"]["stale"], true);
    assert_eq!(db.bytes(), tampered);

    // The next write stores the rebuilt values: the same as the untampered file after that write.
    let reference = db_with(&to_bytes(&pristine), None);
    let append = [
        "append", "--role", "user", "--text", "after", "--tokens", "1",
    ];
    reference.tl(&append).ok(r#"{"node":"n13"}"#);
    db.tl(&append).ok(r#"{"node":"n13"}"#);
    assert_eq!(db.bytes(), reference.bytes());
    assert_eq!(
        fs::read(db.backup_path()).unwrap(),
        tampered,
        "the backup is the file as it was read"
    );
    let written = db.value();
    assert_eq!(written["timelines"][0]["nodes"][n7]["prefix_tokens"], 129);
    assert_eq!(written["timelines"][0]["nodes"][n11]["stale"], true);
    // The schema describes what Timeline writes, so the tampered backup does not match it.
    assert_schema_valid(&db.bytes(), "the database");
    assert!(!schema().is_valid(&serde_json::from_slice(&tampered).unwrap()));
}

#[test]
fn s5_a_canonical_file_loads_and_encodes_to_the_same_bytes() {
    let bytes = fixture("v1-full.json");
    assert_schema_valid(&bytes, "tests/fixtures/v1-full.json");
    let mut db = db_with(&bytes, None);
    // The fixture's idempotency entry is from T0 + 100; at a later time it would expire and the
    // next commit would purge it.
    at(&mut db, T0 + 100);
    db.tl(&["branches"])
        .ok(r#"[{"name":"main","head":"n12","current":true},{"name":"alt","head":"n7","current":false}]"#);
    db.tl(&["context", "--node", "n3"]).ok(
        r#"[{"node":"n1","role":"system","text":"You are terse.","tokens":4},{"node":"n2","role":"user","text":"Plan a trip to Kyoto","tokens":5,"intent_tag":"plan"},{"node":"n3","role":"assistant","text":"Side answer","tokens":3}]"#,
    );
    assert_eq!(db.tl(&["node", "--node", "n3"]).json()["zone"], "cold");
    assert_eq!(
        db.tl(&["node", "--node", "n2"]).json()["intent"],
        json!({"tag": "plan", "note": "first ask"})
    );
    // A mutation that changes nothing proves decode→encode is the identity on this file, but for
    // its format_version: a version 1 file is written as the current version.
    db.tl(&["pin", "--node", "n6"]).ok(r#"{"pinned":"n6"}"#);
    let mut current = full_fixture();
    set(
        &mut current,
        "/format_version",
        json!(timeline::spec::spec().constants.format_version),
    );
    assert_eq!(db.bytes(), to_bytes(&current));
    assert_eq!(
        fs::read(db.backup_path()).unwrap(),
        bytes,
        "the backup is the version 1 file as it was read"
    );
}

#[test]
fn s6_an_old_file_without_optional_fields_loads_as_untagged_and_empty() {
    let bytes = fixture("v1-old-minimal.json");
    assert_schema_valid(&bytes, "tests/fixtures/v1-old-minimal.json");
    let db = db_with(&bytes, None);
    db.tl(&["branches"])
        .ok(r#"[{"name":"main","head":"n2","current":true}]"#);
    db.tl(&["context", "--node", "n2"]).ok(
        r#"[{"node":"n1","role":"user","text":"Hello from an old file","tokens":6},{"node":"n2","role":"assistant","text":"Hi!","tokens":1}]"#,
    );
    let node = db.tl(&["node", "--node", "n1"]).json();
    assert_eq!(
        (&node["intent"], &node["pinned"], &node["zone"]),
        (&Value::Null, &json!(false), &json!("hot"))
    );
    let summary = db.tl(&["node", "--node", "n3"]).json();
    assert_eq!(summary["summary"]["version"], 1, "a missing version is 1");
    assert_eq!(summary["summary"]["stale"], false);
    // No watermark means n0: the branch is not covered yet.
    assert_eq!(
        db.tl(&["archive-check", "--name", "main"]).json()["reasons"][1],
        "the watermark (n0) does not reach the head (n2); it advances when the next summary or placeholder is created"
    );
    assert_eq!(db.bytes(), bytes, "reading an old file does not rewrite it");

    // The first write completes the file with every field, and the old file becomes the backup.
    db.tl(&["append", "--role", "user", "--text", "new", "--tokens", "2"])
        .ok(r#"{"node":"n4"}"#);
    assert_eq!(fs::read(db.backup_path()).unwrap(), bytes);
    let written = db.value();
    assert_eq!(written["idempotency"], json!([]));
    assert_eq!(written["audit"], json!([]));
    let timeline = &written["timelines"][0];
    assert_eq!(timeline["pins"], json!([]));
    assert_eq!(timeline["cold"], json!([]));
    assert_eq!(
        timeline["branches"],
        json!([{"name": "main", "head": "n4", "watermark": "n0"}])
    );
    assert_files_valid(&db);
}

// ---------------------------------------------------------------------------------------------
// I1, I2, U1, U2: idempotency and the audit
// ---------------------------------------------------------------------------------------------

const T0: u64 = 1_767_225_600;
const WINDOW: u64 = 604_800;

fn at(db: &mut Db, now: u64) -> &mut Db {
    db.env("TIMELINE_NOW", &now.to_string())
}

// ---------------------------------------------------------------------------------------------
// M4: path tokens come from prefix sums kept in memory and rebuilt on load
// ---------------------------------------------------------------------------------------------

#[test]
fn s6_every_fixture_matches_the_schema_and_loads() {
    let dir = Path::new(ROOT).join("tests/fixtures");
    let mut checked = 0;
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let bytes = fs::read(&path).unwrap();
            assert_schema_valid(&bytes, &path.display().to_string());
            let db = db_with(&bytes, None);
            let run = db.tl(&["branches"]);
            assert_eq!(
                (run.code, run.stderr.as_str()),
                (0, ""),
                "{}",
                path.display()
            );
            checked += 1;
        }
    }
    assert!(checked >= 2, "no fixtures found in {}", dir.display());
}

/// Idempotency entries with their request digests checked (64 hex digits) and removed, so the rest
/// can be compared exactly.
#[track_caller]
fn without_request_digests(entries: &serde_json::Value) -> serde_json::Value {
    let mut entries = entries.clone();
    for entry in entries.as_array_mut().unwrap() {
        let digest = entry
            .as_object_mut()
            .unwrap()
            .remove("request")
            .expect("every new entry records its request digest");
        let digest = digest.as_str().unwrap();
        assert!(
            digest.len() == 64 && digest.bytes().all(|b| b.is_ascii_hexdigit()),
            "{digest}"
        );
    }
    entries
}

/// Eight processes creating timelines in a database that does not exist yet: one of them makes
/// the file, and every create gets its own timeline (on Windows the replace of a file others hold
/// open is retried, see src/store/replace.rs). JSON engine only for now: a concurrent first write to a
/// new SQLite database is issue 21's (items 1-4), where this test joins both engines.
#[test]
fn s1_concurrent_creates_of_a_new_json_database_lose_nothing() {
    const WORKERS: usize = 8;
    common::use_engine(common::Engine::Json);
    let db = Db::new();
    let ids: BTreeSet<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..WORKERS)
            .map(|_| {
                s.spawn(|| {
                    let run = db.tl(&["create"]);
                    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
                    run.json()["timeline_id"].as_str().unwrap().to_string()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let expected: BTreeSet<String> = (0..WORKERS).map(|n| format!("tl{n}")).collect();
    assert_eq!(ids, expected);
    assert_eq!(
        db.tl(&["timelines"]).json().as_array().unwrap().len(),
        WORKERS
    );
    assert_files_valid(&db);
    assert_eq!(leftovers(&db), Vec::<PathBuf>::new());
}

// Every test below runs on both storage engines (json::… and sqlite::…).
on_every_engine! {
    #[test]
    fn s1_concurrent_appends_from_eight_processes_lose_nothing() {
        const WORKERS: usize = 8;
        const EACH: usize = 25;
        let db = Db::new();
        db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
        let done = std::sync::atomic::AtomicBool::new(false);
        let (results, reads) = std::thread::scope(|s| {
            let writers: Vec<_> = (0..WORKERS)
                .map(|w| {
                    let db = &db;
                    s.spawn(move || {
                        (0..EACH)
                            .map(|i| {
                                let text = format!("worker {w} message {i}");
                                let run = db.tl(&[
                                    "append", "--role", "user", "--text", &text, "--tokens", "1",
                                ]);
                                assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
                                (run.json()["node"].as_str().unwrap().to_string(), text)
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            // A reader runs alongside: every read sees a complete snapshot.
            let reader = s.spawn(|| {
                let mut reads = 0;
                while !done.load(std::sync::atomic::Ordering::Relaxed) && reads < 1000 {
                    let run = db.tl(&["branches"]);
                    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
                    reads += 1;
                }
                reads
            });
            let results: Vec<Vec<(String, String)>> =
                writers.into_iter().map(|h| h.join().unwrap()).collect();
            done.store(true, std::sync::atomic::Ordering::Relaxed);
            (results, reader.join().unwrap())
        });
        assert!(reads > 0);

        let all: Vec<&(String, String)> = results.iter().flatten().collect();
        let ids: BTreeSet<&str> = all.iter().map(|(id, _)| id.as_str()).collect();
        let expected: BTreeSet<String> = (1..=WORKERS * EACH).map(|n| format!("n{n}")).collect();
        assert_eq!(ids.len(), WORKERS * EACH, "node IDs were handed out twice");
        assert_eq!(ids, expected.iter().map(String::as_str).collect());

        db.tl(&["branches"])
            .ok(r#"[{"name":"main","head":"n200","current":true}]"#);
        let context = db.tl(&["context", "--node", "n200"]).json();
        let messages = context.as_array().unwrap();
        assert_eq!(messages.len(), WORKERS * EACH);
        // Every returned ID holds exactly the text its process sent, and each process's messages keep
        // their order.
        for (id, text) in &all {
            let message = messages.iter().find(|m| m["node"] == id.as_str()).unwrap();
            assert_eq!(message["text"], text.as_str(), "{id}");
        }
        for worker in &results {
            let positions: Vec<usize> = worker
                .iter()
                .map(|(id, _)| {
                    messages
                        .iter()
                        .position(|m| m["node"] == id.as_str())
                        .unwrap()
                })
                .collect();
            assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
        }
        assert_files_valid(&db);
        assert_eq!(leftovers(&db), Vec::<PathBuf>::new());
    }

    #[test]
    fn s2_a_mutation_that_changes_nothing_writes_nothing() {
        let db = small_db();
        db.tl(&["pin", "--node", "n1"]).ok(r#"{"pinned":"n1"}"#);
        let (bytes, bak, id) = (
            db.bytes(),
            db.json_backup(),
            identity(&db.path),
        );
        db.tl(&["pin", "--node", "n1"]).ok(r#"{"pinned":"n1"}"#);
        db.tl(&["switch", "--name", "main"])
            .ok(r#"{"current_branch":"main"}"#);
        assert_eq!(db.bytes(), bytes);
        assert_eq!(
            db.json_backup(),
            bak,
            "the backup must keep the older snapshot"
        );
        assert_eq!(identity(&db.path), id, "the file was replaced");
        assert_files_valid(&db);
    }

    #[test]
    fn s2_missing_parent_directory_is_a_clear_error() {
        let db = Db::new();
        let path = db.dir.path().join("missing").join("db.json");
        let run = db
            .command(TL)
            .arg("--db")
            .arg(&path)
            .arg("create")
            .output()
            .unwrap();
        let dir = db.dir.path().join("missing").display().to_string();
        assert_eq!(run.status.code(), Some(3));
        assert_eq!(
            String::from_utf8(run.stderr).unwrap(),
            format!(
                "{}\n",
                json!({"error": format!("the directory {dir} does not exist; create it first (mkdir -p \"{dir}\") or pass --db with another path")})
            )
        );
        assert!(!db.dir.path().join("missing").exists());
    }

    #[test]
    fn i1_replay_returns_the_first_result_and_writes_nothing() {
        let mut db = small_db();
        at(&mut db, T0);
        let mutations: [(&[&str], &str); 7] = [
            (
                &["append", "--role", "user", "--text", "keyed"],
                r#"{"node":"n3"}"#,
            ),
            (
                &["fork", "--node", "n1", "--name", "side"],
                r#"{"branch":"side","head":"n1"}"#,
            ),
            (
                &["switch", "--name", "side"],
                r#"{"current_branch":"side"}"#,
            ),
            (&["pin", "--node", "n1"], r#"{"pinned":"n1"}"#),
            (
                &["summarize", "--from", "n1", "--to", "n2", "--summary", "S"],
                r#"{"node":"n4"}"#,
            ),
            (&["unpin", "--node", "n1"], r#"{"unpinned":"n1"}"#),
            (&["create"], r#"{"timeline_id":"tl1"}"#),
        ];
        for (i, (args, result)) in mutations.iter().enumerate() {
            let key = format!("key-{i}");
            let mut with_key = vec!["--idempotency-key", key.as_str()];
            with_key.extend_from_slice(args);
            db.tl(&with_key).ok(result);
            let (bytes, bak, id) = (
                db.bytes(),
                db.json_backup(),
                identity(&db.path),
            );
            // Replays: the first result, no write, even after other requests changed the state.
            db.tl(&with_key).ok(result);
            assert_eq!(
                (
                    db.bytes(),
                    db.json_backup(),
                    identity(&db.path)
                ),
                (bytes, bak, id),
                "{args:?}"
            );
        }
        // drop-branch and archive-branch too.
        db.tl(&["switch", "--name", "main"]).json();
        db.tl(&["--idempotency-key", "drop", "drop-branch", "--name", "side"])
            .ok(r#"{"dropped":"side"}"#);
        let id = identity(&db.path);
        db.tl(&["--idempotency-key", "drop", "drop-branch", "--name", "side"])
            .ok(r#"{"dropped":"side"}"#);
        assert_eq!(identity(&db.path), id);
        // I4: the same key with other arguments is refused as a conflict, and nothing is written.
        db.tl(&[
            "--idempotency-key",
            "key-0",
            "append",
            "--role",
            "user",
            "--text",
            "different",
        ])
        .err(
            1,
            r#"{"error":"the idempotency key \"key-0\" was already used on tl0 for another request (append with other arguments) within the last 7 days; nothing was written. Use a new key for a new request","data":{"idempotency_key":"key-0","first_operation":"append"}}"#,
        );
        // So is the same key on another operation.
        db.tl(&["--idempotency-key", "key-0", "switch", "--name", "main"])
            .err(
                1,
                r#"{"error":"the idempotency key \"key-0\" was already used on tl0 for another request (append with other arguments) within the last 7 days; nothing was written. Use a new key for a new request","data":{"idempotency_key":"key-0","first_operation":"append"}}"#,
            );
        assert_eq!(identity(&db.path), id);
        assert_files_valid(&db);
    }

    #[test]
    fn i1_the_window_is_seven_days_from_the_first_success() {
        let mut db = small_db();
        let append = [
            "--idempotency-key",
            "k",
            "append",
            "--role",
            "user",
            "--text",
            "once",
        ];
        at(&mut db, T0).tl(&append).ok(r#"{"node":"n3"}"#);
        let id = identity(&db.path);
        at(&mut db, T0 + WINDOW - 1)
            .tl(&append)
            .ok(r#"{"node":"n3"}"#);
        assert_eq!(
            identity(&db.path),
            id,
            "a replay inside the window writes nothing"
        );
        at(&mut db, T0 + WINDOW).tl(&append).ok(r#"{"node":"n4"}"#);
        let file = db.value();
        assert_eq!(
            without_request_digests(&file["idempotency"]),
            json!([{"scope": "tl0", "key": "k", "op": "append", "result": {"node": "n4"}, "ts": T0 + WINDOW}])
        );
        // The new mapping holds for a new window.
        at(&mut db, T0 + 2 * WINDOW - 1)
            .tl(&append)
            .ok(r#"{"node":"n4"}"#);
        assert_files_valid(&db);
    }

    #[test]
    fn i2_a_failure_does_not_consume_the_key() {
        let mut db = small_db();
        at(&mut db, T0);
        let before = db.bytes();
        let id = identity(&db.path);
        db.tl(&["--idempotency-key", "f", "fork", "--node", "n99", "--name", "b"]).err(
            1,
            r#"{"error":"node not found: n99 does not exist in timeline tl0 (it has n1..n2); find the node you mean with `tl log` or `tl search --query ...`"}"#,
        );
        assert_eq!(
            (db.bytes(), identity(&db.path)),
            (before, id),
            "a failure commits nothing"
        );
        db.tl(&[
            "--idempotency-key",
            "f",
            "fork",
            "--node",
            "n1",
            "--name",
            "b",
        ])
        .ok(r#"{"branch":"b","head":"n1"}"#);
        db.tl(&[
            "--idempotency-key",
            "f",
            "fork",
            "--node",
            "n1",
            "--name",
            "b",
        ])
        .ok(r#"{"branch":"b","head":"n1"}"#);
        // An infeasible budget with a key commits nothing either.
        db.tl(&["pin", "--node", "n1"]).json();
        let before = db.bytes();
        let run = db.tl(&[
            "--idempotency-key",
            "bud",
            "budget",
            "--node",
            "n2",
            "--max",
            "1",
        ]);
        assert_eq!(run.code, 1, "{run:?}");
        assert_eq!(db.bytes(), before);
        assert_eq!(db.value()["idempotency"].as_array().unwrap().len(), 1);
        assert_files_valid(&db);
    }

    #[test]
    fn i1_create_is_database_wide_and_other_keys_are_per_timeline() {
        let mut db = Db::new();
        at(&mut db, T0);
        db.tl(&["--idempotency-key", "c", "create"])
            .ok(r#"{"timeline_id":"tl0"}"#);
        db.tl(&["--idempotency-key", "c", "create"])
            .ok(r#"{"timeline_id":"tl0"}"#);
        db.tl(&["create"]).ok(r#"{"timeline_id":"tl1"}"#);
        db.tl(&[
            "--timeline",
            "tl0",
            "append",
            "--role",
            "user",
            "--text",
            "zero",
        ])
        .ok(r#"{"node":"n1"}"#);
        // The same key on two timelines: two executions.
        let keyed = |tl: &str, text: &str| {
            db.tl(&[
                "--timeline",
                tl,
                "--idempotency-key",
                "same",
                "append",
                "--role",
                "user",
                "--text",
                text,
            ])
        };
        keyed("tl0", "on tl0").ok(r#"{"node":"n2"}"#);
        keyed("tl1", "on tl1").ok(r#"{"node":"n1"}"#);
        keyed("tl0", "on tl0").ok(r#"{"node":"n2"}"#);
        keyed("tl1", "on tl1").ok(r#"{"node":"n1"}"#);
        db.tl(&["--timeline", "tl1", "context", "--node", "n1"])
            .ok(r#"[{"node":"n1","role":"user","text":"on tl1","tokens":2}]"#);
        // A key used by create does not collide with the same key on a timeline.
        db.tl(&[
            "--timeline",
            "tl1",
            "--idempotency-key",
            "c",
            "append",
            "--role",
            "user",
            "--text",
            "c",
        ])
        .ok(r#"{"node":"n2"}"#);
        let file = db.value();
        let scopes: Vec<(&str, &str)> = file["idempotency"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e["scope"].as_str().unwrap(), e["key"].as_str().unwrap()))
            .collect();
        assert_eq!(
            scopes,
            [
                ("database", "c"),
                ("tl0", "same"),
                ("tl1", "same"),
                ("tl1", "c")
            ]
        );
        assert_files_valid(&db);
    }

    #[test]
    fn i2_expired_entries_are_purged_on_the_next_successful_commit_and_audited_forever() {
        let mut db = small_db();
        at(&mut db, T0)
            .tl(&[
                "--idempotency-key",
                "old",
                "append",
                "--role",
                "user",
                "--text",
                "a",
            ])
            .ok(r#"{"node":"n3"}"#);
        at(&mut db, T0 + 10)
            .tl(&[
                "--idempotency-key",
                "newer",
                "append",
                "--role",
                "user",
                "--text",
                "b",
            ])
            .ok(r#"{"node":"n4"}"#);
        // Expired, but a failing request commits nothing, so nothing is purged yet.
        at(&mut db, T0 + WINDOW);
        let before = db.bytes();
        db.tl(&["fork", "--node", "n99", "--name", "x"]).err(
            1,
            r#"{"error":"node not found: n99 does not exist in timeline tl0 (it has n1..n4); find the node you mean with `tl log` or `tl search --query ...`"}"#,
        );
        assert_eq!(db.bytes(), before);
        // A successful commit without a key purges "old" only.
        db.tl(&["append", "--role", "user", "--text", "c"])
            .ok(r#"{"node":"n5"}"#);
        let file = db.value();
        assert_eq!(
            without_request_digests(&file["idempotency"]),
            json!([{"scope": "tl0", "key": "newer", "op": "append", "result": {"node": "n4"}, "ts": T0 + 10}])
        );
        assert_eq!(
            file["audit"],
            json!([
                {"ts": T0, "op": "idempotency", "timeline": "tl0", "key": "old", "scope": "tl0", "result": {"node": "n3"}},
                {"ts": T0 + 10, "op": "idempotency", "timeline": "tl0", "key": "newer", "scope": "tl0", "result": {"node": "n4"}}
            ])
        );
        assert_files_valid(&db);
    }

    #[test]
    fn u2_audit_timestamps_never_decrease_when_the_clock_goes_back() {
        let mut db = Db::new();
        at(&mut db, T0)
            .tl(&["--idempotency-key", "c", "create"])
            .ok(r#"{"timeline_id":"tl0"}"#);
        db.tl(&["append", "--role", "user", "--text", "a", "--tokens", "100"])
            .json();
        db.tl(&["append", "--role", "user", "--text", "b", "--tokens", "100"])
            .json();
        db.tl(&["append", "--role", "user", "--text", "c", "--tokens", "3"])
            .json();
        at(&mut db, T0 + 100)
            .tl(&["summarize", "--from", "n2", "--to", "n2", "--summary", "s"])
            .ok(r#"{"node":"n4"}"#);
        // The clock goes back by an hour.
        let supersede = [
            "--idempotency-key",
            "x",
            "summarize",
            "--from",
            "n2",
            "--to",
            "n2",
            "--summary",
            "s2",
            "--supersede",
            "n4",
        ];
        at(&mut db, T0 - 3600).tl(&supersede).ok(r#"{"node":"n5"}"#);
        at(&mut db, T0 + 50)
            .tl(&["budget", "--node", "n3", "--max", "40"])
            .json();
        let file = db.value();
        assert_eq!(
            file["audit"],
            json!([
                {"ts": T0, "op": "idempotency", "key": "c", "scope": "database", "result": {"timeline_id": "tl0"}},
                {"ts": T0 + 100, "op": "summarize", "timeline": "tl0", "from": "n2", "to": "n2", "node": "n4"},
                {"ts": T0 + 100, "op": "supersede", "timeline": "tl0", "from": "n2", "to": "n2", "node": "n5", "supersedes": "n4"},
                {"ts": T0 + 100, "op": "idempotency", "timeline": "tl0", "key": "x", "scope": "tl0", "result": {"node": "n5"}},
                {"ts": T0 + 100, "op": "placeholder", "timeline": "tl0", "from": "n1", "to": "n1", "node": "n6"}
            ])
        );
        // The idempotency entry keeps the clock's own time; a replay still finds it.
        assert_eq!(file["idempotency"][1]["ts"], T0 - 3600);
        at(&mut db, T0 - 3000).tl(&supersede).ok(r#"{"node":"n5"}"#);
        assert_files_valid(&db);
    }

    #[test]
    fn m4_path_tokens_follow_the_tree_and_overflow_is_an_error() {
        let db = Db::new();
        db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
        db.tl(&["append", "--role", "user", "--text", "a", "--tokens", "5"])
            .ok(r#"{"node":"n1"}"#);
        db.tl(&[
            "append",
            "--role",
            "assistant",
            "--text",
            "b",
            "--tokens",
            "7",
        ])
        .ok(r#"{"node":"n2"}"#);
        db.tl(&["fork", "--node", "n1", "--name", "side"]).json();
        db.tl(&["switch", "--name", "side"]).json();
        db.tl(&["append", "--role", "user", "--text", "c", "--tokens", "11"])
            .ok(r#"{"node":"n3"}"#);
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n2",
            "--summary",
            "s",
            "--tokens",
            "3",
        ])
        .ok(r#"{"node":"n4"}"#);
        let path_tokens = |id: &str| db.tl(&["node", "--node", id]).json()["path_tokens"].clone();
        assert_eq!(
            ["n1", "n2", "n3", "n4"].map(path_tokens),
            [json!(5), json!(12), json!(16), json!(3)]
        );
        // The largest token count of one message is taken (#42 item 10: more is refused by the
        // argument check, and a path's sum by the append past `max_path_tokens`, tests/suite/budget.rs).
        db.tl(&["append", "--role", "user", "--text", "d", "--tokens", "4294967295"])
            .ok(r#"{"node":"n5"}"#);
        assert_eq!(path_tokens("n5"), json!(4294967311_u64));
        let before = db.bytes();
        db.tl(&["append", "--role", "user", "--text", "e", "--tokens", "4294967296"]).err(
            2,
            r#"{"error":"invalid argument --tokens: must be at most 4294967295, got 4294967296"}"#,
        );
        assert_eq!(db.bytes(), before);
        db.tl(&["append", "--role", "user", "--text", "e", "--tokens", "0"])
            .ok(r#"{"node":"n6"}"#);
        assert_files_valid(&db);

        // A file whose token counts overflow along a path is refused.
        let mut file = db.value();
        let nodes = file["timelines"][0]["nodes"].as_array_mut().unwrap();
        let n5 = nodes.iter().position(|n| n["id"] == "n5").unwrap();
        nodes[n5]["tokens"] = json!(u64::MAX - 16);
        let n6 = nodes.iter().position(|n| n["id"] == "n6").unwrap();
        nodes[n6]["tokens"] = json!(1);
        let damaged = db_with(&to_bytes(&file), None);
        assert_refused(
            &damaged,
            "invalid content (timeline tl0: the token counts on the path to n6 add up to more than fits in 64 bits)",
        );
    }

    #[test]
    fn s1_cli_and_mcp_server_share_one_database() {
        use common::TL_MCP;
        use std::io::Write;
        const MCP_CALLS: usize = 50;
        const CLI_WORKERS: usize = 4;
        const CLI_EACH: usize = 25;
        let db = Db::new();
        db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
        let mut input = String::from(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"store-test","version":"1"}}}"#,
        );
        input.push('\n');
        input.push_str(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        input.push('\n');
        for i in 1..=MCP_CALLS {
            let call = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "timeline_append",
                "arguments": {"timeline_id": "tl0", "role": "assistant", "text": format!("mcp {i}"), "tokens": 1}}});
            input.push_str(&format!("{call}\n"));
        }
        let mut server = db
            .command(TL_MCP)
            .arg("--db")
            .arg(&db.path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = server.stdin.take().unwrap();
        let (cli, mcp_out) = std::thread::scope(|s| {
            let feeder = s.spawn(move || stdin.write_all(input.as_bytes()).unwrap());
            let workers: Vec<_> = (0..CLI_WORKERS)
                .map(|w| {
                    let db = &db;
                    s.spawn(move || {
                        (0..CLI_EACH)
                            .map(|i| {
                                let text = format!("cli {w} {i}");
                                let run = db.tl(&[
                                    "append", "--role", "user", "--text", &text, "--tokens", "1",
                                ]);
                                (run.json()["node"].as_str().unwrap().to_string(), text)
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            feeder.join().unwrap();
            let cli: Vec<(String, String)> = workers
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect();
            (cli, server.wait_with_output().unwrap())
        });
        assert!(mcp_out.status.success());
        let mut all = cli;
        for line in String::from_utf8(mcp_out.stdout).unwrap().lines().skip(1) {
            let response: Value = serde_json::from_str(line).unwrap();
            let id = response["id"].as_u64().unwrap();
            let node = response["result"]["structuredContent"]["node"].as_str();
            all.push((
                node.unwrap_or_else(|| panic!("{line}")).to_string(),
                format!("mcp {id}"),
            ));
        }
        let total = MCP_CALLS + CLI_WORKERS * CLI_EACH;
        assert_eq!(all.len(), total);
        let ids: BTreeSet<String> = all.iter().map(|(id, _)| id.clone()).collect();
        assert_eq!(ids, (1..=total).map(|n| format!("n{n}")).collect());
        let head = format!("n{total}");
        let messages = db.tl(&["context", "--node", &head]).json();
        for (id, text) in &all {
            let message = messages
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["node"] == id.as_str())
                .unwrap();
            assert_eq!(message["text"], text.as_str());
        }
        assert_files_valid(&db);
    }

    // From the code review (formerly tests/review.rs).
    /// A read of a database that does not exist fails and leaves nothing behind: it used to create
    /// `<db>.lock` (so `tl --db typo.json branches` left `typo.json.lock` in the directory).
    #[test]
    fn s1_a_read_of_a_missing_database_creates_no_lock_file() {
        let db = Db::new();
        db.tl(&["branches"]).err(
            1,
            r#"{"error":"no timeline in this database yet; run `tl create` first (or pass --db to use another file)"}"#,
        );
        db.tl(&["export", "--format", "ascii"]).err(
            1,
            r#"{"error":"no timeline in this database yet; run `tl create` first (or pass --db to use another file)"}"#,
        );
        assert_eq!(std::fs::read_dir(db.dir.path()).unwrap().count(), 0);
    }
}

// From the code review (formerly tests/review.rs).
/// S3, S5: a summary whose range is not older than the summary itself is invalid source data: the file
/// is refused with the recovery steps and left byte for byte as it was.
#[test]
fn s5_a_summary_covering_itself_is_refused_on_load() {
    let db = Db::new();
    db.tl(&["create"]).json();
    db.append("user", "a", 1);
    db.tl(&["summarize", "--from", "n1", "--to", "n1", "--summary", "s"])
        .ok(r#"{"node":"n2"}"#);
    let mut file = db.value();
    for node in file["timelines"][0]["nodes"].as_array_mut().unwrap() {
        if node["id"] == "n2" {
            node["summary"]["from"] = "n2".into();
            node["summary"]["to"] = "n2".into();
        }
    }
    std::fs::write(&db.path, serde_json::to_vec_pretty(&file).unwrap()).unwrap();
    let before = db.bytes();
    let run = db.tl(&["branches"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(
        run.stderr
            .contains("invalid content (timeline tl0: summary n2 has an invalid range n2..n2)"),
        "{run:?}"
    );
    assert_eq!(db.bytes(), before);
}

// ---------------------------------------------------------------------------------------------
// The SQLite engine: recognising files, refusing damaged and newer ones, private files, copies
// ---------------------------------------------------------------------------------------------

/// A SQLite database with one timeline and two messages.
fn small_sqlite() -> Db {
    common::use_engine(common::Engine::Sqlite);
    small_db()
}

/// Every command refuses the database with exit 3 and exactly `stderr`, and changes no byte of it.
#[track_caller]
fn assert_sqlite_refused(db: &Db, stderr: &str) {
    let before = fs::read(&db.path).unwrap();
    for args in [
        &["branches"][..],
        &["append", "--role", "user", "--text", "lost?"],
        &["create"],
        &["db", "info"],
    ] {
        db.tl(args).err(3, stderr);
        assert_eq!(
            fs::read(&db.path).unwrap(),
            before,
            "tl {args:?} changed it"
        );
    }
}

fn sqlite_refusal(db: &Db, problem: &str) -> String {
    let p = db.path.display();
    json!({
        "error": format!(
            "the database {p} cannot be used: {problem}. Nothing was changed and nothing will be written to it. To recover: stop every tl and tl-mcp process that uses it, keep a copy of the damaged file and its -wal file (cp \"{p}\" \"{p}.corrupt\"), then restore a copy made with tl db backup, or salvage what SQLite can read (sqlite3 \"{p}\" .recover | sqlite3 recovered.db) and check it with tl --db recovered.db db check"
        )
    })
    .to_string()
}

#[test]
fn s8_a_damaged_sqlite_file_is_refused_untouched() {
    let db = small_sqlite();
    let mut bytes = fs::read(&db.path).unwrap();
    // Damage the header after its magic string: the page size and format bytes.
    for b in &mut bytes[16..24] {
        *b = 0xff;
    }
    fs::write(&db.path, &bytes).unwrap();
    assert_sqlite_refused(&db, &sqlite_refusal(&db, "file is not a database"));
}

/// A change waits while another program holds SQLite's write lock, and goes through once it is
/// released, instead of failing: Timeline's busy handler tries again every millisecond.
#[test]
fn s1_an_append_waits_for_another_programs_transaction() {
    let db = small_sqlite();
    let mut other = rusqlite::Connection::open(&db.path).unwrap();
    let holding = other
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .unwrap();
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        let append = s.spawn(|| {
            let run = db.tl(&["append", "--role", "user", "--text", "after the lock"]);
            done.store(true, std::sync::atomic::Ordering::SeqCst);
            run
        });
        std::thread::sleep(std::time::Duration::from_millis(500));
        assert!(
            !done.load(std::sync::atomic::Ordering::SeqCst),
            "the append finished while another connection held the write lock"
        );
        holding.commit().unwrap();
        append.join().unwrap().ok(r#"{"node":"n3"}"#);
    });
    db.tl(&["branches"])
        .ok(r#"[{"name":"main","head":"n3","current":true}]"#);
}

/// A database of schema 1 (before archived branches were recorded) is migrated when it is opened,
/// keeps everything it held, and records what it archives from then on.
#[test]
fn s8_a_schema_1_database_is_migrated_to_schema_2() {
    let db = small_sqlite();
    let conn = rusqlite::Connection::open(&db.path).unwrap();
    conn.execute_batch("DROP TABLE search_pending; DROP INDEX nodes_summaries; DROP INDEX nodes_pinned; DROP INDEX nodes_by_real_start; ALTER TABLE nodes DROP COLUMN jump; ALTER TABLE nodes DROP COLUMN path_min_tokens; DROP INDEX nodes_with_newer_parent; ALTER TABLE nodes DROP COLUMN provenance; DROP TABLE archived_branches; DROP TABLE imports; DROP TABLE search_index; DROP TABLE search_docs; PRAGMA user_version = 1")
        .unwrap();
    drop(conn);
    db.tl(&["branches"])
        .ok(r#"[{"name":"main","head":"n2","current":true}]"#);
    let version: i64 = rusqlite::Connection::open(&db.path)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version as u64, timeline::store::sqlite_schema_version());
    db.tl(&["fork", "--node", "n1", "--name", "side"])
        .ok(r#"{"branch":"side","head":"n1"}"#);
    db.tl(&[
        "summarize",
        "--from",
        "n1",
        "--to",
        "n1",
        "--summary",
        "first",
        "--tokens",
        "1",
    ])
    .ok(r#"{"node":"n3"}"#);
    db.tl(&["archive-branch", "--name", "side"])
        .ok(r#"{"archived":[]}"#);
    db.tl(&["restore-branch", "--branch", "side"])
        .ok(r#"{"branch":"side","head":"n1","restored":[]}"#);
    db.tl(&["db", "check"]).json();
}

#[test]
fn s8_a_newer_sqlite_schema_is_refused_untouched() {
    let db = small_sqlite();
    rusqlite::Connection::open(&db.path)
        .unwrap()
        .execute_batch("PRAGMA user_version = 99")
        .unwrap();
    let p = db.path.display();
    assert_sqlite_refused(
        &db,
        &json!({"error": format!("the database {p} has schema version 99, newer than this version of Timeline reads ({}); nothing was changed. Use the release of Timeline that wrote it, or a newer one", timeline::store::sqlite_schema_version())}).to_string(),
    );
}

#[test]
fn s8_another_programs_sqlite_file_and_other_files_are_refused_untouched() {
    let db = Db::new();
    let other = db.dir.path().join("other.db");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        .unwrap();
    let mut other_db = Db::new();
    other_db.path = other.clone();
    assert_sqlite_refused(
        &other_db,
        &json!({"error": format!("the file {} is an SQLite database of another program, not a Timeline database; nothing was changed. Pass --db with the path of a Timeline database", other.display())}).to_string(),
    );
    let text = db.dir.path().join("notes.txt");
    fs::write(&text, "plain text\n").unwrap();
    let mut text_db = Db::new();
    text_db.path = text.clone();
    assert_sqlite_refused(
        &text_db,
        &json!({"error": format!("the file {} is neither a Timeline SQLite database nor a JSON snapshot; nothing was changed. Pass --db with the path of a Timeline database, or with a new file name (ending in .json for a JSON snapshot, anything else for SQLite)", text.display())}).to_string(),
    );
    // An existing file is recognised by its content, whatever its name: a snapshot named .db works.
    let snapshot = db.dir.path().join("snapshot.db");
    fs::write(&snapshot, fixture("v1-full.json")).unwrap();
    let mut snapshot_db = Db::new();
    snapshot_db.path = snapshot;
    assert_eq!(snapshot_db.tl(&["db", "info"]).json()["engine"], "json");
}

#[cfg(unix)]
#[test]
fn s8_sqlite_database_wal_and_shm_are_private() {
    let db = small_sqlite();
    // A running tl-mcp keeps its connection, so the -wal and -shm files exist meanwhile.
    let mut mcp = common::McpSession::start(&db);
    let appended = mcp.ok(
        "timeline_append",
        json!({"timeline_id": "tl0", "role": "user", "text": "held open"}),
    );
    assert_eq!(appended, json!({"node": "n3"}));
    for suffix in ["", "-wal", "-shm"] {
        let path = PathBuf::from(format!("{}{suffix}", db.path.display()));
        assert_eq!(mode(&path), 0o600, "{}", path.display());
    }
}

/// The SQLite database file itself. (Its -wal and -shm files are SQLite's, made with the directory's
/// inherited DACL; spec/NOTES.md.)
#[cfg(windows)]
#[test]
fn s8_sqlite_database_is_owner_only_on_windows() {
    let db = small_sqlite();
    assert_eq!(dacl(&db.path), OWNER_ONLY);
    db.tl(&["append", "--role", "user", "--text", "third"])
        .ok(r#"{"node":"n3"}"#);
    assert_eq!(dacl(&db.path), OWNER_ONLY);
}

/// The -wal and -shm files, which hold the latest messages while a writer has the database open, are
/// as private as the database.
#[test]
#[cfg(windows)]
fn s8_sqlite_wal_and_shm_are_owner_only_on_windows() {
    let db = small_sqlite();
    let mut mcp = common::McpSession::start(&db);
    mcp.ok(
        "timeline_append",
        serde_json::json!({"role": "user", "text": "third"}),
    );
    for suffix in ["-wal", "-shm"] {
        let companion = PathBuf::from(format!("{}{suffix}", db.path.display()));
        assert_eq!(dacl(&companion), OWNER_ONLY, "{suffix}");
    }
}

#[test]
fn s8_convert_round_trips_rich_databases_between_engines() {
    let dir = common::TempDir::new();
    for (name, bytes) in [
        ("v1-full.json", fixture("v1-full.json")),
        (
            "demo.timeline.json",
            fs::read(Path::new(ROOT).join("examples/demo.timeline.json")).unwrap(),
        ),
    ] {
        let source = dir.path().join(name);
        fs::write(&source, &bytes).unwrap();
        let sqlite = dir.path().join(format!("{name}.db"));
        let back = dir.path().join(format!("{name}.back.json"));
        let run = |db: &Path, args: &[&str]| {
            let mut cmd = std::process::Command::new(TL);
            let out = cmd
                .env_remove("TIMELINE_DB")
                .arg("--db")
                .arg(db)
                .args(args)
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
            serde_json::from_slice::<Value>(&out.stdout).unwrap()
        };
        let converted = run(
            &source,
            &["db", "convert", "--to", sqlite.to_str().unwrap()],
        );
        assert_eq!(converted["engine"], "sqlite");
        assert_eq!(run(&sqlite, &["db", "check"])["ok"], true);
        run(&sqlite, &["db", "convert", "--to", back.to_str().unwrap()]);
        // Same IDs, texts, branches, pins, summaries, cold zone, idempotency records and audit: the
        // canonical snapshot of the original and of the round trip are the same bytes.
        let original = timeline::store::encode(&timeline::store::decode(&bytes).unwrap());
        assert_eq!(fs::read(&back).unwrap(), original, "{name}");
        // Reads give the same answers on both engines.
        for args in [&["branches"][..], &["export", "--format", "ascii"]] {
            let a = std::process::Command::new(TL)
                .arg("--db")
                .arg(&source)
                .args(args)
                .output()
                .unwrap();
            let b = std::process::Command::new(TL)
                .arg("--db")
                .arg(&sqlite)
                .args(args)
                .output()
                .unwrap();
            assert_eq!(a.stdout, b.stdout, "{name} {args:?}");
        }
        // convert never overwrites.
        let again = std::process::Command::new(TL)
            .arg("--db")
            .arg(&source)
            .args(["db", "convert", "--to", sqlite.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(again.status.code(), Some(1));
        assert_eq!(
            String::from_utf8(again.stderr).unwrap(),
            format!(
                "{}\n",
                json!({"error": format!("{} already exists; nothing was written. Choose a new file name (Timeline never overwrites a file)", sqlite.display())})
            )
        );
    }
}

#[test]
fn s8_backup_is_consistent_while_other_processes_write() {
    for engine in [common::Engine::Sqlite, common::Engine::Json] {
        common::use_engine(engine);
        let db = small_db();
        let done = std::sync::atomic::AtomicBool::new(false);
        let copies: Vec<PathBuf> = std::thread::scope(|s| {
            let writer = s.spawn(|| {
                for i in 0..30 {
                    db.tl(&["append", "--role", "user", "--text", &format!("w{i}")])
                        .json();
                }
                done.store(true, std::sync::atomic::Ordering::Relaxed);
            });
            let mut copies = Vec::new();
            let mut i = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) || i < 3 {
                let name = match engine {
                    common::Engine::Json => format!("copy{i}.json"),
                    common::Engine::Sqlite => format!("copy{i}.db"),
                    common::Engine::Postgres => {
                        unreachable!("this test runs on the file engines only")
                    }
                };
                let target = db.dir.path().join(name);
                let result = db.tl(&["db", "backup", "--to", target.to_str().unwrap()]);
                assert_eq!(result.json()["to"], target.to_str().unwrap());
                copies.push(target);
                i += 1;
            }
            writer.join().unwrap();
            copies
        });
        // Every copy is a whole database: it passes the check, and its head's context is complete.
        for copy in copies {
            let mut c = Db::new();
            c.path = copy;
            assert_eq!(c.tl(&["db", "check"]).json()["ok"], true);
            let head = c.tl(&["branches"]).json()[0]["head"]
                .as_str()
                .unwrap()
                .to_string();
            let depth: usize = head[1..].parse().unwrap();
            assert_eq!(
                c.tl(&["context", "--node", &head])
                    .json()
                    .as_array()
                    .unwrap()
                    .len(),
                depth
            );
        }
        // A copy keeps the engine: a name for the other engine is refused.
        let wrong = db.dir.path().join(match engine {
            common::Engine::Json => "wrong.db",
            common::Engine::Sqlite => "wrong.json",
            common::Engine::Postgres => unreachable!("this test runs on the file engines only"),
        });
        let run = db.tl(&["db", "backup", "--to", wrong.to_str().unwrap()]);
        assert_eq!(run.code, 2, "{run:?}");
        assert!(!wrong.exists());
    }
}

#[test]
fn s8_db_check_reports_damaged_derived_state_and_changes_nothing() {
    let db = small_sqlite();
    // json!: a Windows path's backslashes are escaped in JSON.
    db.tl(&["db", "check"]).ok(
        &json!({"ok": true, "engine": "sqlite", "path": db.path.display().to_string(), "problems": []})
            .to_string(),
    );
    rusqlite::Connection::open(&db.path)
        .unwrap()
        .execute_batch("UPDATE nodes SET prefix_tokens = 99 WHERE id = 2")
        .unwrap();
    let before = fs::read(&db.path).unwrap();
    let p = db.path.display();
    db.tl(&["db", "check"]).err(
        3,
        &json!({
            "error": format!("the database {p} has 1 problem(s): timeline tl0: the stored state of n2 differs from what its history gives. Nothing was changed; see docs/storage.md for recovery"),
            "data": {"problems": ["timeline tl0: the stored state of n2 differs from what its history gives"]}
        })
        .to_string(),
    );
    assert_eq!(fs::read(&db.path).unwrap(), before);
}

#[test]
fn s8_a_failed_first_change_leaves_no_database_behind() {
    common::use_engine(common::Engine::Sqlite);
    let db = Db::new();
    db.tl(&["append", "--role", "user", "--text", "x"]).err(
        1,
        r#"{"error":"no timeline in this database yet; run `tl create` first (or pass --db to use another file)"}"#,
    );
    assert_eq!(
        fs::read_dir(db.dir.path()).unwrap().count(),
        0,
        "a file was left behind"
    );
    db.tl(&["db", "info"]).ok(
        &common::with_sqlite_fields(json!({"engine": "sqlite", "path": db.path.display().to_string(), "exists": false, "format_version": null,
            "file_bytes": 0, "timelines": 0, "nodes": 0, "cold_nodes": 0}), common::SQLITE_LOG)
        .to_string(),
    );
}

// ---------------------------------------------------------------------------------------------
// Issue 12: backups next to a missing database, special files, lock links, exhausted IDs
// ---------------------------------------------------------------------------------------------

#[test]
fn a_missing_database_next_to_its_backup_is_refused_with_recovery_steps() {
    let db = small_db();
    let backup = fs::read(db.backup_path()).unwrap();
    fs::remove_file(&db.path).unwrap();
    let p = db.path.display();
    let bak = db.backup_path().display().to_string();
    let expected = json!({"error": format!("the database {p} does not exist, but its backup {bak} does: the database was probably deleted or moved by mistake, so nothing was done. To restore the previous state: cp \"{bak}\" \"{p}\". To start a new database here instead, remove the backup first: rm \"{bak}\"")}).to_string();
    for args in [
        &["create"][..],
        &["branches"],
        &["append", "--role", "user", "--text", "x"],
    ] {
        db.tl(args).err(3, &expected);
    }
    assert!(!db.path.exists());
    assert_eq!(fs::read(db.backup_path()).unwrap(), backup);
    // The recovery step in the message works.
    fs::copy(db.backup_path(), &db.path).unwrap();
    db.tl(&["branches"])
        .ok(r#"[{"name":"main","head":"n1","current":true}]"#);
}

#[cfg(unix)]
#[test]
fn special_files_are_refused_without_reading_them() {
    for name in ["fifo.json", "fifo.db"] {
        let db = Db::new();
        let fifo = db.dir.path().join(name);
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        let mut special = Db::new();
        special.path = fifo.clone();
        for args in [&["branches"][..], &["create"]] {
            special.tl(args).err(3, &json!({"error": format!("{} is not a regular file (it is a FIFO, socket or device), so it cannot be a database; nothing was read or written. Pass --db with the path of a database file", fifo.display())}).to_string());
        }
    }
    let mut device = Db::new();
    device.path = PathBuf::from("/dev/zero");
    device.tl(&["branches"]).err(3, r#"{"error":"/dev/zero is not a regular file (it is a FIFO, socket or device), so it cannot be a database; nothing was read or written. Pass --db with the path of a database file"}"#);
}

/// A FIFO or a directory where SQLite keeps a database's log or its index is refused by a read and
/// by a change, at once (a FIFO opened to read would wait for a writer for ever), naming it;
/// nothing is written, and once it is removed the database works. (A link there:
/// `a_linked_wal_or_shm_file_is_named`.)
#[cfg(unix)]
#[test]
fn sqlite_special_files_at_the_logs_names_are_refused_without_waiting() {
    common::use_engine(common::Engine::Sqlite);
    for suffix in ["-wal", "-shm"] {
        let db = Db::new();
        db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
        db.tl(&["append", "--role", "user", "--text", "kept"])
            .ok(r#"{"node":"n1"}"#);
        let companion = PathBuf::from(format!("{}{suffix}", db.path.display()));
        let _ = fs::remove_file(&companion);
        let what = if suffix == "-wal" {
            "write-ahead log"
        } else {
            "write-ahead log's index"
        };
        let message = json!({"error": format!("{} is not a regular file (it is a directory, FIFO, socket or device), and SQLite keeps the database's {what} under that name; nothing was read or written. Remove it when no program uses the database {}, then try again", companion.display(), db.path.display())}).to_string();
        let fifo = std::process::Command::new("mkfifo")
            .arg(&companion)
            .status()
            .unwrap();
        assert!(fifo.success());
        let before = fs::read(&db.path).unwrap();
        db.tl(&["log"]).err(3, &message);
        db.tl(&["append", "--role", "user", "--text", "lost"])
            .err(3, &message);
        assert_eq!(fs::read(&db.path).unwrap(), before);
        fs::remove_file(&companion).unwrap();
        fs::create_dir(&companion).unwrap();
        db.tl(&["log"]).err(3, &message);
        fs::remove_dir(&companion).unwrap();
        db.tl(&["append", "--role", "user", "--text", "second"])
            .ok(r#"{"node":"n2"}"#);
    }
}

#[cfg(unix)]
#[test]
fn a_lock_file_that_is_a_link_and_a_backup_that_is_a_directory_are_named() {
    let db = small_db();
    let lock = lock_path(&db);
    fs::remove_file(&lock).unwrap();
    std::os::unix::fs::symlink(db.dir.path().join("elsewhere"), &lock).unwrap();
    let before = db.bytes();
    let l = lock.display();
    db.tl(&["append", "--role", "user", "--text", "x"]).err(3, &json!({"error": format!("the lock file {l} is a symbolic link; Timeline creates it as a plain file and will not use anything else. Remove it (rm \"{l}\") when no tl or tl-mcp process is running, then try again")}).to_string());
    assert_eq!(db.bytes(), before);
    fs::remove_file(&lock).unwrap();
    // A directory where the backup goes: nothing is written.
    fs::remove_file(db.backup_path()).unwrap();
    fs::create_dir(db.backup_path()).unwrap();
    let b = db.backup_path().display().to_string();
    db.tl(&["append", "--role", "user", "--text", "x"]).err(3, &json!({"error": format!("{b} is not a regular file (a directory, link or special file), so the previous snapshot cannot be kept there; nothing was written. Move it away (mv \"{b}\" \"{b}.old\") and try again")}).to_string());
    assert_eq!(db.bytes(), before);
}

#[test]
fn a_database_that_used_every_timeline_id_says_so() {
    // The JSON snapshot, written by hand, and the same state in SQLite.
    let json_db = db_with(
        br#"{"format_version": 1, "next_timeline": 18446744073709551615}"#,
        None,
    );
    let expected = r#"{"error":"this database has used every timeline ID (the next one would be tl18446744073709551615, the largest there is); nothing was created. Keep new timelines in a new database (--db)"}"#;
    json_db.tl(&["create"]).err(1, expected);
    common::use_engine(common::Engine::Sqlite);
    let sqlite_db = Db::new();
    sqlite_db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
    rusqlite::Connection::open(&sqlite_db.path)
        .unwrap()
        .execute_batch("UPDATE state SET next_timeline = -1")
        .unwrap();
    sqlite_db.tl(&["create"]).err(1, expected);
}

// ---------------------------------------------------------------------------------------------
// Read-only media, databases you may not write, and links in shared directories (issue #12)
// ---------------------------------------------------------------------------------------------

#[cfg(unix)]
mod read_only_and_links {
    use super::*;

    #[cfg(unix)]
    fn is_root() -> bool {
        // SAFETY: geteuid has no preconditions and cannot fail.
        unsafe { libc::geteuid() == 0 }
    }

    use common::names_in;

    /// Run `bin --db <db> args` with the database's directory bind-mounted read-only in a private mount
    /// namespace (unshare(1) and user namespaces, as on the CI machines), so the kernel answers every
    /// write with EROFS exactly as on read-only media.
    #[cfg(target_os = "linux")]
    fn on_read_only_mount(db: &Db, bin: &str, args: &[&str], input: &str) -> Run {
        on_read_only_mount_at(db, &db.path, bin, args, input)
    }

    /// `on_read_only_mount` for another database path in the same directory.
    #[cfg(target_os = "linux")]
    fn on_read_only_mount_at(db: &Db, path: &Path, bin: &str, args: &[&str], input: &str) -> Run {
        use std::io::Write;
        let dir = db.dir.path();
        let mut cmd = db.command("unshare");
        cmd.args(["--user", "--map-root-user", "--mount", "sh", "-c"])
        .arg(r#"mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" || exit 97; shift; exec "$@""#)
        .arg("sh")
        .arg(dir)
        .arg(bin)
        .arg("--db")
        .arg(path)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap_or_else(|e| {
            panic!("this test needs unshare(1) from util-linux to mount a directory read-only: {e}")
        });
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let output = child.wait_with_output().unwrap();
        assert_ne!(
            output.status.code(),
            Some(97),
            "could not mount {} read-only in a user namespace: {}",
            dir.display(),
            String::from_utf8_lossy(&output.stderr)
        );
        Run::from(output)
    }

    fn engine_name(db: &Db) -> &'static str {
        match db.engine() {
            common::Engine::Json => "json",
            common::Engine::Sqlite => "sqlite",
            common::Engine::Postgres => unreachable!("this test runs on the file engines only"),
        }
    }

    /// Whether this run can act as another user (root can); without root, the parts of a test that need
    /// one are left out only when the person running the tests asks for it.
    #[cfg(unix)]
    fn can_be_another_user(what: &str) -> bool {
        if is_root() {
            return true;
        }
        assert!(
            std::env::var_os("TIMELINE_TEST_NOT_ROOT").is_some(),
            "{what} needs root (to act as the user nobody): run the tests as root (as CI does), or set TIMELINE_TEST_NOT_ROOT=1 to leave this part out"
        );
        false
    }

    /// A copy of `bin` that the user nobody may run, wherever the build directory is. Copied by cp(1):
    /// a copy written by this process could be "text file busy" when run, if a test on another thread
    /// forked while the copy's file was still open for writing.
    #[cfg(unix)]
    fn runnable_by_anyone(bin: &str) -> (TempDir, PathBuf) {
        use std::os::unix::fs::PermissionsExt;
        let dir = TempDir::new();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
        let copy = dir.path().join(Path::new(bin).file_name().unwrap());
        let copied = std::process::Command::new("cp")
            .arg(bin)
            .arg(&copy)
            .status()
            .unwrap();
        assert!(copied.success(), "cp {bin} {}", copy.display());
        (dir, copy)
    }

    /// Run `bin --db <path> args` as the user nobody (uid 65534).
    #[cfg(unix)]
    fn as_nobody(db: &Db, path: &Path, bin: &Path, args: &[&str]) -> Run {
        use std::os::unix::process::CommandExt;
        let mut cmd = db.command(bin.to_str().unwrap());
        cmd.arg("--db")
            .arg(path)
            .args(args)
            .stdin(Stdio::null())
            .uid(65534)
            .gid(65534);
        Run::from(cmd.output().unwrap())
    }

    /// Give `paths` to the user nobody.
    #[cfg(unix)]
    fn give_to_nobody(paths: &[&Path]) {
        for path in paths {
            std::os::unix::fs::chown(path, Some(65534), Some(65534)).unwrap();
        }
    }

    /// The error line of a change refused for `why`, with the files that need write access on this engine.
    fn change_refused(db: &Db, why: &str) -> String {
        let p = db.path.display();
        let hint = match db.engine() {
            common::Engine::Json => "the file, its directory and its lock file",
            common::Engine::Sqlite => "the file and its directory",
            common::Engine::Postgres => unreachable!("this test runs on the file engines only"),
        };
        json!({"error": format!("cannot change the database {p}: {why}. Nothing was written; reading it works. To change it, get write access to {hint}, or copy it to a writable place (cp \"{p}\" <new path>) and use the copy")}).to_string()
    }

    /// The database with two messages, as a read-only test finds it.
    fn hello_db() -> Db {
        let db = Db::new();
        db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
        db.append("user", "hello world", 2);
        db.append("assistant", "hello back", 2);
        db
    }

    const HELLO_CONTEXT: &str = r#"[{"node":"n1","role":"user","text":"hello world","tokens":2},{"node":"n2","role":"assistant","text":"hello back","tokens":2}]"#;

    // File permissions, media and links: the file engines only (a server database has no file).
    on_both_engines! {
        /// #12.8: on a read-only mount every read works (the JSON engine takes its shared lock on a
        /// read-only descriptor, or none when there is no lock file; SQLite reads the file as immutable),
        /// and a change is refused with a message that says why; nothing on the mount changes.
        #[cfg(target_os = "linux")]
        #[test]
        fn reads_work_on_read_only_media_and_changes_are_refused() {
            let db = hello_db();
            let before = (names_in(db.dir.path()), common::stored_state(&db.path));
            let p = db.path.display().to_string();
            let ro = |args: &[&str]| on_read_only_mount(&db, TL, args, "");
            let refused = change_refused(&db, "it is on a read-only file system");
            let mut rounds = vec!["as it is"];
            if db.engine() == common::Engine::Json {
                rounds.push("without a lock file");
            }
            for round in rounds {
                if round == "without a lock file" {
                    fs::remove_file(lock_path(&db)).unwrap();
                }
                ro(&["context", "--node", "n2"]).ok(HELLO_CONTEXT);
                ro(&["branches"]).ok(r#"[{"name":"main","head":"n2","current":true}]"#);
                let hits = ro(&["search", "--query", "hello"]).json();
                assert_eq!(hits["hits"].as_array().map(Vec::len), Some(2), "{round}: {hits}");
                ro(&["db", "check"]).ok(&json!({"ok": true, "engine": engine_name(&db), "path": p, "problems": []}).to_string());
                ro(&["append", "--role", "user", "--text", "more"]).err(3, &refused);
            let fresh = db.dir.path().join(format!("new.{}", db.path.extension().unwrap().to_str().unwrap()));
            on_read_only_mount_at(&db, &fresh, TL, &["create"], "").err(3, &json!({"error": format!("cannot create the database {}: its directory {} is on a read-only file system; nothing was written. Pass --db with a path in a directory you may write to", fresh.display(), db.dir.path().display())}).to_string());
                ro(&["pin", "--node", "n1"]).err(3, &refused);
                // The MCP server reads too, and refuses a change as a tool error with the same message.
                let out = on_read_only_mount(&db, common::TL_MCP, &[], concat!(
                    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#, "\n",
                    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"timeline_context","arguments":{"timeline_id":"tl0","node":"n1"}}}"#, "\n",
                    r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"timeline_append","arguments":{"timeline_id":"tl0","role":"user","text":"more"}}}"#, "\n",
                ));
                let replies: Vec<Value> = out.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
                assert_eq!(replies.len(), 3, "{out:?}");
                assert_eq!(replies[1]["result"]["structuredContent"]["messages"][0]["text"], "hello world", "{out:?}");
                assert_eq!(replies[2]["result"]["isError"], true, "{out:?}");
                let text: Value = serde_json::from_str(replies[2]["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
                assert_eq!(text["error"], serde_json::from_str::<Value>(&refused).unwrap()["error"], "{out:?}");
                let mut expected = before.clone();
                if round == "without a lock file" {
                    expected.0.retain(|n| !n.ends_with(".lock"));
                }
                assert_eq!((names_in(db.dir.path()), common::stored_state(&db.path)), expected, "{round}");
            }
        }

        /// A file name with the characters SQLite's URIs give a meaning to (`?`, `#`, `%`) is read
        /// on read-only media like any other (SQLite opens it through an escaped `immutable` URI).
        #[cfg(target_os = "linux")]
        #[test]
        fn a_database_named_with_uri_characters_is_read_on_read_only_media() {
            let mut db = Db::new();
            let name = format!("we?ird #1 100%25.{}", db.path.extension().unwrap().to_str().unwrap());
            db.path = db.dir.path().join(name);
            db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
            db.append("user", "hello world", 2);
            on_read_only_mount(&db, TL, &["context", "--node", "n1"], "")
                .ok(r#"[{"node":"n1","role":"user","text":"hello world","tokens":2}]"#);
        }

        /// #12.8: a database you may read but not write (mode 0644 in a directory you cannot write to; for
        /// the JSON engine also a lock file of mode 0444) is read, and a change is refused and says why.
        /// Runs as the unprivileged user `nobody` when the tests run as root (root may write anything).
        #[cfg(unix)]
        #[test]
        fn a_database_you_may_only_read_is_read_and_changes_are_refused() {
            use std::os::unix::fs::PermissionsExt;
            let db = hello_db();
            let p = db.path.display().to_string();
            let json = db.engine() == common::Engine::Json;
            let (_bin_dir, tl) = runnable_by_anyone(TL);
            fs::set_permissions(db.dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
            // As root the reader is nobody, for whom 0644 is read-only; without root the reader is
            // the owner, so the file is made read-only for it too.
            let mode = if is_root() { 0o644 } else { 0o444 };
            fs::set_permissions(&db.path, fs::Permissions::from_mode(mode)).unwrap();
            if json {
                fs::set_permissions(lock_path(&db), fs::Permissions::from_mode(0o444)).unwrap();
            }
            let as_reader = |args: &[&str]| {
                if is_root() {
                    return as_nobody(&db, &db.path, &tl, args);
                }
                // Without root the test's own user is the reader: take away its write access.
                fs::set_permissions(db.dir.path(), fs::Permissions::from_mode(0o555)).unwrap();
                let run = Run::from(
                    db.command(tl.to_str().unwrap())
                        .arg("--db")
                        .arg(&db.path)
                        .args(args)
                        .stdin(Stdio::null())
                        .output()
                        .unwrap(),
                );
                fs::set_permissions(db.dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
                run
            };
            let before = (names_in(db.dir.path()), common::stored_state(&db.path));
            let why = if json {
                format!("you may not write its lock file {p}.lock (permission denied)")
            } else {
                format!("you may not write the file {p} (permission denied)")
            };
            let refused = change_refused(&db, &why);
            as_reader(&["context", "--node", "n2"]).ok(HELLO_CONTEXT);
            as_reader(&["db", "check"]).ok(&json!({"ok": true, "engine": engine_name(&db), "path": p, "problems": []}).to_string());
            as_reader(&["append", "--role", "user", "--text", "more"]).err(3, &refused);
            if json {
                // A lock file the reader may not even read (the owner's, mode 0600): no lock needed.
                fs::set_permissions(lock_path(&db), fs::Permissions::from_mode(if is_root() { 0o600 } else { 0o000 })).unwrap();
                as_reader(&["context", "--node", "n2"]).ok(HELLO_CONTEXT);
                as_reader(&["append", "--role", "user", "--text", "more"]).err(3, &refused);
                fs::set_permissions(lock_path(&db), fs::Permissions::from_mode(0o444)).unwrap();
                // No lock file, and none can be made: the read needs none.
                fs::remove_file(lock_path(&db)).unwrap();
                as_reader(&["context", "--node", "n2"]).ok(HELLO_CONTEXT);
                as_reader(&["append", "--role", "user", "--text", "more"]).err(3, &refused);
                fs::write(lock_path(&db), b"").unwrap();
                fs::set_permissions(lock_path(&db), fs::Permissions::from_mode(0o444)).unwrap();
            }
            assert_eq!((names_in(db.dir.path()), common::stored_state(&db.path)), before);
            if is_root() {
                // In a directory the reader may write to, a read still leaves nothing behind (for
                // SQLite: no -shm or -wal file of the reader's that the owner could not write).
                fs::set_permissions(db.dir.path(), fs::Permissions::from_mode(0o777)).unwrap();
                as_reader(&["context", "--node", "n2"]).ok(HELLO_CONTEXT);
                fs::set_permissions(db.dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
                assert_eq!((names_in(db.dir.path()), common::stored_state(&db.path)), before);
            }
        }

        /// A reader that may not write the database keeps one `tl-mcp` session open while the owner
        /// changes it: every read sees the database as it is then (a connection that trusts its cache
        /// would keep answering from the state it first read).
        #[cfg(unix)]
        #[test]
        fn a_reader_without_write_access_sees_the_owners_later_changes() {
            use std::os::unix::fs::PermissionsExt;
            use std::os::unix::process::CommandExt;
            if !can_be_another_user("reading as another user") {
                return;
            }
            let db = hello_db();
            let (_bin_dir, tl_mcp) = runnable_by_anyone(common::TL_MCP);
            let share = |db: &Db| {
                fs::set_permissions(db.dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
                for path in [db.path.clone(), lock_path(db)] {
                    if path.exists() {
                        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
                    }
                }
            };
            share(&db);
            let mut cmd = db.command(tl_mcp.to_str().unwrap());
            cmd.arg("--db").arg(&db.path).uid(65534).gid(65534);
            let mut mcp = common::McpSession::spawn(cmd);
            let branches = || json!({"timeline_id": "tl0"});
            assert_eq!(mcp.ok("timeline_branches", branches())["branches"], db.tl(&["branches"]).json());
            // The owner changes the database (a JSON change writes a new file of mode 0600 again).
            db.tl(&["fork", "--node", "n1", "--name", "alt"]).ok(r#"{"branch":"alt","head":"n1"}"#);
            db.append("user", "later", 1);
            share(&db);
            assert_eq!(mcp.ok("timeline_branches", branches())["branches"], db.tl(&["branches"]).json());
            let context = mcp.ok("timeline_context", json!({"timeline_id": "tl0", "node": "n3"}));
            assert_eq!(context["messages"][2]["text"], "later", "{context}");
        }

        /// A database file you may write in a directory you may not (nobody's file in root's
        /// directory): reads work, a change is refused naming the directory, a new database there is
        /// refused naming the directory, and nothing is left behind.
        #[cfg(unix)]
        #[test]
        fn a_database_in_a_directory_you_may_not_write_is_read_and_changes_are_refused() {
            use std::os::unix::fs::PermissionsExt;
            if !can_be_another_user("a database of the user nobody") {
                return;
            }
            let db = hello_db();
            let (_bin_dir, tl) = runnable_by_anyone(TL);
            fs::set_permissions(db.dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
            let lock = lock_path(&db);
            let mut files = vec![db.path.as_path()];
            if lock.exists() {
                files.push(&lock);
            }
            give_to_nobody(&files);
            let before = (names_in(db.dir.path()), common::stored_state(&db.path));
            let d = db.dir.path().display();
            as_nobody(&db, &db.path, &tl, &["context", "--node", "n2"]).ok(HELLO_CONTEXT);
            let why = match db.engine() {
                common::Engine::Json => format!("you may not create files in its directory {d} (a change writes the new snapshot there and renames it into place)"),
                common::Engine::Sqlite => format!("you may not create files in its directory {d} (SQLite keeps its -wal and -shm files there while it changes the database)"),
                common::Engine::Postgres => unreachable!("this test runs on the file engines only"),
            };
            as_nobody(&db, &db.path, &tl, &["append", "--role", "user", "--text", "more"]).err(3, &change_refused(&db, &why));
            let fresh = db.dir.path().join(format!("new.{}", db.path.extension().unwrap().to_str().unwrap()));
            as_nobody(&db, &fresh, &tl, &["create"]).err(3, &json!({"error": format!("cannot create the database {}: you may not create files in its directory {d} (permission denied); nothing was written. Pass --db with a path in a directory you may write to", fresh.display())}).to_string());
            assert_eq!((names_in(db.dir.path()), common::stored_state(&db.path)), before);
        }

        /// A database file its owner made read-only (mode 0444) is not replaced by a change, on either
        /// engine, though its directory would allow that: the change is refused and says why.
        #[cfg(unix)]
        #[test]
        fn a_write_protected_database_is_not_changed() {
            use std::os::unix::fs::PermissionsExt;
            if !can_be_another_user("a database of the user nobody") {
                return;
            }
            let db = hello_db();
            let (_bin_dir, tl) = runnable_by_anyone(TL);
            let lock = lock_path(&db);
            let mut owned = vec![db.dir.path(), db.path.as_path()];
            if lock.exists() {
                owned.push(&lock);
            }
            give_to_nobody(&owned);
            fs::set_permissions(&db.path, fs::Permissions::from_mode(0o444)).unwrap();
            let before = (names_in(db.dir.path()), common::stored_state(&db.path));
            let p = db.path.display();
            as_nobody(&db, &db.path, &tl, &["context", "--node", "n2"]).ok(HELLO_CONTEXT);
            as_nobody(&db, &db.path, &tl, &["append", "--role", "user", "--text", "more"])
                .err(3, &change_refused(&db, &format!("you may not write the file {p} (permission denied)")));
            assert_eq!((names_in(db.dir.path()), common::stored_state(&db.path)), before);
            // Writable again, the same change goes through.
            fs::set_permissions(&db.path, fs::Permissions::from_mode(0o644)).unwrap();
            as_nobody(&db, &db.path, &tl, &["append", "--role", "user", "--text", "more"]).ok(r#"{"node":"n3"}"#);
        }

        /// #12.7: a link in a directory anyone may write to (mode 1777, like /tmp) is followed when it is
        /// yours or the directory owner's, and refused when another user planted it, before anything is
        /// read or written. The kernel opens the file through the link; Timeline never resolves it itself.
        #[cfg(unix)]
        #[test]
        fn a_link_planted_by_another_user_in_a_shared_directory_is_refused() {
            use std::os::unix::fs::PermissionsExt;
            let db = hello_db();
            let shared = db.dir.path().join("shared");
            fs::create_dir(&shared).unwrap();
            fs::set_permissions(&shared, fs::Permissions::from_mode(0o1777)).unwrap();
            let link = shared.join(db.path.file_name().unwrap());
            std::os::unix::fs::symlink(&db.path, &link).unwrap();
            let via_link = |args: &[&str]| {
                let output = db.command(TL).arg("--db").arg(&link).args(args).stdin(Stdio::null()).output().unwrap();
                Run::from(output)
            };
            // Your own link is followed, and a change goes to the real file.
            via_link(&["append", "--role", "user", "--text", "via my link"]).ok(r#"{"node":"n3"}"#);
            db.tl(&["branches"]).ok(r#"[{"name":"main","head":"n3","current":true}]"#);
            if !is_root() {
                assert!(
                    std::env::var_os("TIMELINE_TEST_NOT_ROOT").is_some(),
                    "planting a link owned by another user needs root: run the tests as root (as CI does), or set TIMELINE_TEST_NOT_ROOT=1 to leave this part out"
                );
                return;
            }
            std::os::unix::fs::lchown(&link, Some(65534), Some(65534)).unwrap();
            let before = (names_in(db.dir.path()), names_in(&shared), common::stored_state(&db.path));
            let refused = json!({"error": format!("{} is a symbolic link owned by another user (uid 65534) in {}, a directory anyone can write to, so Timeline will not follow it: such a link can be planted to make you read or write a file elsewhere. Nothing was read or written. Pass --db with the real path of the database, or keep the database in a directory only you can write to", link.display(), shared.display())}).to_string();
            via_link(&["branches"]).err(3, &refused);
            via_link(&["append", "--role", "user", "--text", "planted"]).err(3, &refused);
            assert_eq!((names_in(db.dir.path()), names_in(&shared), common::stored_state(&db.path)), before);
            // The same link in a directory only its owner may write to is followed, as the kernel would.
            fs::set_permissions(&shared, fs::Permissions::from_mode(0o755)).unwrap();
            via_link(&["context", "--node", "n2"]).ok(HELLO_CONTEXT);
        }

        // From the code review (formerly tests/review.rs).
        /// A symbolic link to a database that does not exist yet is refused with the way forward, and
        /// left alone. (It used to be replaced by a new regular file, so the database the link named was
        /// silently abandoned; then it was resolved by Timeline itself to create the file where it pointed,
        /// which let a link planted in /tmp decide where a file was created.) Once the database exists at
        /// the real path, the link is followed.
        #[cfg(unix)]
        #[test]
        fn s2_a_dangling_symlink_is_refused_not_replaced() {
            let db = Db::new();
            let real_dir = db.dir.path().join("real");
            std::fs::create_dir(&real_dir).unwrap();
            let target = real_dir.join(db.path.file_name().unwrap());
            std::os::unix::fs::symlink(&target, &db.path).unwrap();
            let refused = serde_json::json!({"error": format!(
                "{} is a symbolic link to {}, which does not exist; nothing was read or written. Timeline does not create a database through a link (it could not tell who may write where the link points): create the database at the real path (tl --db <real path> create) or remove the link",
                db.path.display(),
                target.display()
            )})
            .to_string();
            db.tl(&["create"]).err(3, &refused);
            db.tl(&["branches"]).err(3, &refused);
            assert!(
                std::fs::symlink_metadata(&db.path)
                    .unwrap()
                    .file_type()
                    .is_symlink()
            );
            assert_eq!(std::fs::read_dir(&real_dir).unwrap().count(), 0);
            let mut real = Db::new();
            real.path = target.clone();
            real.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
            db.tl(&["append", "--role", "user", "--text", "hi"])
                .ok(r#"{"node":"n1"}"#);
            db.tl(&["context", "--node", "n1"])
                .ok(r#"[{"node":"n1","role":"user","text":"hi","tokens":1}]"#);
            assert!(
                std::fs::symlink_metadata(&db.path)
                    .unwrap()
                    .file_type()
                    .is_symlink()
            );
        }

        /// A link into a missing directory is a dangling link: refused, and the link is left alone.
        #[cfg(unix)]
        #[test]
        fn g4_a_symlink_into_a_missing_directory_is_refused() {
            let db = Db::new();
            let missing = db.dir.path().join("missing");
            std::os::unix::fs::symlink(missing.join("db.json"), &db.path).unwrap();
            db.tl(&["create"]).err(
                3,
                &serde_json::json!({"error": format!(
                    "{} is a symbolic link to {}, which does not exist; nothing was read or written. Timeline does not create a database through a link (it could not tell who may write where the link points): create the database at the real path (tl --db <real path> create) or remove the link",
                    db.path.display(),
                    missing.join("db.json").display()
                )})
                .to_string(),
            );
            assert!(
                std::fs::symlink_metadata(&db.path)
                    .unwrap()
                    .file_type()
                    .is_symlink()
            );
            assert_eq!(std::fs::read_dir(db.dir.path()).unwrap().count(), 1);
        }
    }
}

/// The first write to a database that does not exist yet (#21): a full disk, files left by a database
/// that was deleted, processes creating it at once, and what killed first writes left.
mod first_write {
    use super::*;
    use common::{Engine, McpSession};

    use common::names_in;

    /// Set the modification time of `path` to `secs` seconds ago, as a file left that long ago.
    #[cfg(unix)]
    fn age(path: &Path, secs: u64) {
        let then = std::time::SystemTime::now() - std::time::Duration::from_secs(secs);
        fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(then)
            .unwrap();
    }

    #[cfg(unix)]
    fn file_name(db: &Db) -> String {
        db.path.file_name().unwrap().to_string_lossy().into_owned()
    }

    /// `sh -c script` with the test directory as `$1` and `tl` as `$2`, with a 1 MiB tmpfs mounted at
    /// `$1/m` in a private mount namespace (unshare(1) and user namespaces, as on the CI machines).
    #[cfg(target_os = "linux")]
    fn on_small_tmpfs(db: &Db, script: &str) -> String {
        let dir = db.dir.path();
        fs::create_dir_all(dir.join("m")).unwrap();
        let output = db
            .command("unshare")
            .args(["--user", "--map-root-user", "--mount", "sh", "-c"])
            .arg(format!(
                r#"cd "$1" && mount -t tmpfs -o size=1m tmpfs m || exit 97
{script}"#
            ))
            .arg("sh")
            .arg(dir)
            .arg(TL)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| {
                panic!("this test needs unshare(1) from util-linux to mount a small tmpfs: {e}")
            });
        assert_ne!(
            output.status.code(),
            Some(97),
            "could not mount a tmpfs in a user namespace: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).unwrap()
    }

    // Files beside a database: the file engines only (a server creates tables, not files).
    on_both_engines! {
        /// #21 item 1: on a nearly full disk a first write (create, import) fails with "disk full",
        /// names the database's path and leaves nothing at it; with space freed the same commands
        /// work. SQLite is tried with about 800 KB of 1 MiB used (the first change fits in the
        /// write-ahead log, the checkpoint into the file does not) and with the disk full; a JSON
        /// snapshot of one timeline needs a few KB, so only a full disk stops it.
        #[test]
        #[cfg(target_os = "linux")]
        fn a_first_write_on_a_full_disk_leaves_nothing_and_works_once_space_is_freed() {
            let db = Db::new();
            fs::write(
                db.dir.path().join("input.json"),
                r#"[{"role":"user","content":"hello"},{"role":"assistant","content":"hi"}]"#,
            )
            .unwrap();
            let name = match db.engine() {
                Engine::Json => "n.json",
                Engine::Sqlite => "n.db",
                Engine::Postgres => unreachable!("this test runs on the file engines only"),
            };
            let full = "the disk is full: free some space and try again";
            let sqlite_full = format!("database or disk is full; {full} (nothing was changed)");
            // (fill, the error of both commands)
            let fills: Vec<(&str, String)> = match db.engine() {
                Engine::Json => vec![(
                    "bs=4k",
                    format!(
                        "cannot write the database m/n.json (it was left as it was): No space left on device (os error 28) ({full})"
                    ),
                )],
                Engine::Sqlite => vec![
                    // The change fits in the write-ahead log; copying it into the file does not.
                    // (With schema 6 this holds for fills of about 730 to 796 KiB: the middle.)
                    (
                        "bs=1k count=764",
                        format!("cannot finish writing the database m/n.db: {sqlite_full}"),
                    ),
                    (
                        "bs=4k",
                        format!("cannot set up the database m/n.db: {sqlite_full}"),
                    ),
                ],
                Engine::Postgres => unreachable!("this test runs on the file engines only"),
            };
            for (fill, error) in &fills {
                let out = on_small_tmpfs(
                    &db,
                    &format!(
                        r#"dd if=/dev/zero of=m/fill {fill} 2>/dev/null
"$2" --db m/{name} create 2>&1; echo "create: $?"
"$2" --db m/{name} import --format openai --input input.json 2>&1; echo "import: $?"
echo left: $(ls -A m)
rm m/fill
"$2" --db m/{name} create; echo "create: $?"
"$2" --db m/{name} import --format openai --input input.json >/dev/null; echo "import: $?"
"$2" --db m/{name} timelines"#
                    ),
                );
                let mut lines = out.lines();
                for command in ["create", "import"] {
                    let error = json!({ "error": error }).to_string();
                    assert_eq!(lines.next(), Some(error.as_str()), "{command} with {fill}: {out}");
                    assert_eq!(lines.next(), Some(format!("{command}: 3").as_str()), "{out}");
                }
                let left = match db.engine() {
                    // (The lock file is not a database; it stays so that writers keep one lock.)
                    Engine::Json => "left: fill n.json.lock",
                    Engine::Sqlite => "left: fill",
                    Engine::Postgres => unreachable!("this test runs on the file engines only"),
                };
                let rest: Vec<&str> = lines.collect();
                let timeline = |id: &str, messages: u64, updated: &str| {
                    format!(
                        r#"{{"timeline_id":"{id}","title":null,"created_at":{},"updated_at":{updated},"messages":{messages},"branches":1,"current_branch":"main"}}"#,
                        common::CLOCK,
                    )
                };
                assert_eq!(
                    rest,
                    [
                        left.to_string(),
                        r#"{"timeline_id":"tl0"}"#.to_string(),
                        "create: 0".to_string(),
                        "import: 0".to_string(),
                        format!(
                            "[{},{}]",
                            timeline("tl0", 0, common::CLOCK),
                            timeline("tl1", 2, common::CLOCK)
                        ),
                    ],
                    "with {fill}: {out}"
                );
            }
        }

        /// #21 item 2: files a killed session left beside a database that was then deleted are
        /// never merged into a new one: the first write is refused, naming them and what to do, and
        /// they are left untouched. (SQLite: its -wal and -shm. JSON: the snapshot's backup; the
        /// lock file holds no data and is used as it is.)
        #[test]
        fn files_left_beside_a_deleted_database_are_refused_untouched() {
            let db = Db::new();
            db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
            let mut mcp = McpSession::start(&db);
            mcp.ok(
                "timeline_append",
                json!({"timeline_id": "tl0", "role": "user", "text": "deleted", "tokens": 1}),
            );
            // Dropping the session kills tl-mcp with SIGKILL.
            drop(mcp);
            fs::remove_file(&db.path).unwrap();
            let left = names_in(db.dir.path());
            let bytes: Vec<Vec<u8>> = left
                .iter()
                .map(|n| fs::read(db.dir.path().join(n)).unwrap())
                .collect();
            // The path as it stands inside a JSON string (backslashes doubled on Windows).
            let p = serde_json::to_string(&db.path.display().to_string()).unwrap();
            let p = &p[1..p.len() - 1];
            let expected = match db.engine() {
                Engine::Sqlite => {
                    assert_eq!(left, ["db.sqlite-shm", "db.sqlite-wal"]);
                    format!(
                        r#"{{"error":"cannot create the database {p}: {p}-wal and {p}-shm are left from a database that was at this path before (deleted or moved without them, perhaps while a tl or tl-mcp process had it open). SQLite would merge them into the new database and bring back old or damaged data, so nothing was written and they were left untouched. If the old database was moved, move them beside it; if it was deleted on purpose, stop every tl and tl-mcp process that used it, delete them (rm \"{p}-wal\" \"{p}-shm\") and run the command again"}}"#
                    )
                }
                Engine::Json => {
                    assert_eq!(left, ["db.json.bak", "db.json.lock"]);
                    format!(
                        r#"{{"error":"the database {p} does not exist, but its backup {p}.bak does: the database was probably deleted or moved by mistake, so nothing was done. To restore the previous state: cp \"{p}.bak\" \"{p}\". To start a new database here instead, remove the backup first: rm \"{p}.bak\""}}"#
                    )
                }
                Engine::Postgres => unreachable!("this test runs on the file engines only"),
            };
            for args in [&["create"][..], &["append", "--role", "user", "--text", "x", "--tokens", "1"]] {
                db.tl(args).err(3, &expected);
                assert_eq!(names_in(db.dir.path()), left);
                for (name, before) in left.iter().zip(&bytes) {
                    assert_eq!(&fs::read(db.dir.path().join(name)).unwrap(), before, "{name}");
                }
            }
            // Through tl-mcp too, in its own words.
            let mut mcp = McpSession::start(&db);
            let refused = mcp.call("timeline_create", json!({})).unwrap_err();
            assert!(refused["error"].as_str().unwrap().contains("nothing was"), "{refused}");
            drop(mcp);
            assert_eq!(names_in(db.dir.path()), left);
            // Once they are removed as the message says, the database is created afresh.
            for name in &left {
                fs::remove_file(db.dir.path().join(name)).unwrap();
            }
            db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
            assert_eq!(db.append("user", "new", 1), "n1");
            let context = db.tl(&["context", "--node", "n1"]).json();
            let texts: Vec<&str> = context
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["text"].as_str().unwrap())
                .collect();
            assert_eq!(texts, ["new"], "the deleted message came back: {context}");
        }

        /// #21 item 3: six processes making the first change of a new database at once (six tl, or
        /// two tl-mcp sessions and four tl) all succeed: the ones that lose the creation race go on
        /// as ordinary writers. 20 trials of each.
        #[test]
        fn first_writers_at_once_all_succeed() {
            const TRIALS: usize = 20;
            for trial in 0..TRIALS {
                for sessions in [0, 2] {
                    let db = Db::new();
                    let mut mcps: Vec<McpSession> =
                        (0..sessions).map(|_| McpSession::start(&db)).collect();
                    let ids: Vec<String> = std::thread::scope(|s| {
                        let db = &db;
                        let from_mcp: Vec<_> = mcps
                            .iter_mut()
                            .map(|mcp| {
                                s.spawn(move || {
                                    mcp.ok("timeline_create", json!({}))["timeline_id"]
                                        .as_str()
                                        .unwrap()
                                        .to_string()
                                })
                            })
                            .collect();
                        let children: Vec<_> = (sessions..6)
                            .map(|_| {
                                db.command(TL)
                                    .arg("--db")
                                    .arg(&db.path)
                                    .arg("create")
                                    .stdin(Stdio::null())
                                    .stdout(Stdio::piped())
                                    .stderr(Stdio::piped())
                                    .spawn()
                                    .unwrap()
                            })
                            .collect();
                        let mut ids: Vec<String> = children
                            .into_iter()
                            .map(|child| {
                                let run = Run::from(child.wait_with_output().unwrap());
                                assert_eq!(
                                    (run.code, run.stderr.as_str()),
                                    (0, ""),
                                    "trial {trial} with {sessions} sessions: {run:?}"
                                );
                                run.json()["timeline_id"].as_str().unwrap().to_string()
                            })
                            .collect();
                        ids.extend(from_mcp.into_iter().map(|h| h.join().unwrap()));
                        ids
                    });
                    let got: BTreeSet<String> = ids.into_iter().collect();
                    let want: BTreeSet<String> = (0..6).map(|i| format!("tl{i}")).collect();
                    assert_eq!(got, want, "trial {trial} with {sessions} sessions");
                    drop(mcps);
                    let listed = db.tl(&["timelines"]).json();
                    assert_eq!(listed.as_array().unwrap().len(), 6, "{listed}");
                    let staged: Vec<String> = names_in(db.dir.path())
                        .into_iter()
                        // `.creating` is the turn's lock file on Windows, removed on close.
                        .filter(|n| {
                            n.contains(".new-") || n.contains(".tmp-") || n.ends_with(".creating")
                        })
                        .collect();
                    assert_eq!(staged, Vec::<String>::new(), "trial {trial}");
                }
            }
        }

        /// #21 item 4: temporary files that first writes killed midway left (a staged SQLite
        /// database with its -wal and -shm; a JSON snapshot's temporary files) are removed by the next
        /// change, those of a process still writing (locked) or just made are kept.
        #[test]
        #[cfg(unix)]
        fn temporaries_of_killed_first_writes_are_removed_by_the_next_change() {
            let db = Db::new();
            let dir = db.dir.path();
            let name = file_name(&db);
            let make = |file: &str, secs: u64| {
                let path = dir.join(file);
                fs::write(&path, b"left").unwrap();
                age(&path, secs);
                path
            };
            let (dead, kept): (Vec<String>, Vec<String>) = match db.engine() {
                Engine::Sqlite => (
                    vec![
                        format!(".{name}.new-4000001-1"),
                        format!(".{name}.new-4000001-1-wal"),
                        format!(".{name}.new-4000001-1-shm"),
                        // A log whose staged file is already gone.
                        format!(".{name}.new-4000003-3-wal"),
                    ],
                    vec![
                        format!(".{name}.new-4000002-2"),
                        format!(".{name}.new-4000002-2-wal"),
                        // Just made: its process may not have locked it yet.
                        format!(".{name}.new-4000004-4"),
                    ],
                ),
                Engine::Json => (
                    vec![format!(".{name}.tmp-4000001-1"), format!(".{name}.bak-4000001-2")],
                    vec![],
                ),
                Engine::Postgres => unreachable!("this test runs on the file engines only"),
            };
            for file in dead.iter().chain(&kept) {
                make(file, if file.contains("4000004") { 0 } else { 60 });
            }
            // A live writer's staged file: locked by this process, as its writer does.
            let live = fs::File::open(dir.join(format!(".{name}.new-4000002-2")));
            if let Ok(live) = &live {
                live.lock().unwrap();
            }
            let mut expected = kept.clone();
            expected.push(name.clone());
            if db.engine() == Engine::Json {
                expected.push(format!("{name}.lock"));
            }
            expected.sort();
            db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
            assert_eq!(names_in(dir), expected);
            // The next change of the existing database removes those left since.
            for file in &dead {
                make(file, 60);
            }
            db.tl(&["append", "--role", "user", "--text", "x", "--tokens", "1"])
                .ok(r#"{"node":"n1"}"#);
            match db.engine() {
                Engine::Json => expected.push(format!("{name}.bak")),
                // Its log, kept blank (the database's own name is listed already).
                _ => expected.extend(common::closed_sqlite(dir, &name).into_iter().skip(1)),
            }
            expected.sort();
            assert_eq!(names_in(dir), expected);
            // Once its writer is gone (the lock released), a staged file is removed too.
            drop(live);
            let mut mcp = McpSession::start(&db);
            mcp.ok(
                "timeline_append",
                json!({"timeline_id": "tl0", "role": "user", "text": "y", "tokens": 1}),
            );
            drop(mcp);
            let left: Vec<String> = names_in(dir)
                .into_iter()
                .filter(|n| n.contains(".new-") && !n.contains("4000004"))
                .collect();
            assert_eq!(left, Vec::<String>::new());
        }
    }
}

/// A `-wal` or `-shm` file that is a symbolic link is named in the refusal (not reported as a
/// directory one may not write), for `append` and `import` alike, and nothing is written through
/// it (issue 21, item 13). SQLite only: a JSON snapshot keeps no such files.
#[cfg(unix)]
#[test]
fn a_linked_wal_or_shm_file_is_named() {
    common::use_engine(common::Engine::Sqlite);
    let db = Db::new();
    db.tl(&["create"]).json();
    let export = db.dir.path().join("messages.json");
    fs::write(&export, r#"[{"role": "user", "content": "imported"}]"#).unwrap();
    let elsewhere = db.dir.path().join("elsewhere");
    for suffix in ["-wal", "-shm"] {
        let mut link = db.path.clone().into_os_string();
        link.push(suffix);
        let link = PathBuf::from(link);
        let _ = fs::remove_file(&link);
        std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
        let refused = json!({"error": format!("cannot change the database {}: its {suffix} file {} is a symbolic link, which SQLite never opens (a link there could make it write elsewhere); remove the link (rm \"{}\") once no tl or tl-mcp process uses the database. Nothing was written; reading it works", db.path.display(), link.display(), link.display())}).to_string();
        db.tl(&["append", "--role", "user", "--text", "through a link"])
            .err(3, &refused);
        let input = export.display().to_string();
        db.tl(&["import", "--format", "openai", "--input", &input])
            .err(3, &refused);
        assert!(!elsewhere.exists());
        fs::remove_file(&link).unwrap();
    }
    db.tl(&["timelines"]).json();
    assert_eq!(db.tl(&["db", "info"]).json()["nodes"], json!(0));
}
