//! Completion through the real `tl` binary, as the scripts of `tl completions SHELL` ask for it:
//! `COMPLETE=<shell> tl -- <words>` prints the candidates for the last word in that shell's format.
//! Node IDs, branch names and timeline IDs come from the database the words name, on both storage
//! engines; commands, flags and allowed values from the clap tree. A missing or damaged database
//! offers nothing, and completing never changes a file.

use crate::common;

use common::{Db, Run, TL, TempDir};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

/// Ask `tl` for the candidates of the last of `words` (which start with `tl`) the way `shell`'s
/// script does: the environment it sets, and its separator between candidates.
fn ask(mut cmd: Command, shell: &str, words: &[&str]) -> Run {
    cmd.env_remove("COMPLETE")
        .env_remove("_CLAP_COMPLETE_INDEX")
        .env_remove("_CLAP_IFS")
        .env("COMPLETE", shell);
    let index = (words.len() - 1).to_string();
    match Path::new(shell).file_stem().unwrap().to_str().unwrap() {
        "bash" => cmd
            .env("_CLAP_COMPLETE_INDEX", &index)
            .env("_CLAP_IFS", "\x0b")
            .env("_CLAP_COMPLETE_COMP_TYPE", "9")
            .env("_CLAP_COMPLETE_SPACE", "false"),
        "zsh" | "elvish" => cmd
            .env("_CLAP_COMPLETE_INDEX", &index)
            .env("_CLAP_IFS", "\n"),
        _ => &mut cmd,
    };
    let out = cmd
        .arg("--")
        .args(words)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    Run::from(out)
}

/// The candidates for `tl --db <db> <words>`, asserting a quiet success.
#[track_caller]
fn offered(db: &Db, shell: &str, words: &[&str]) -> String {
    let path = db.path.display().to_string();
    let mut all = vec!["tl", "--db", path.as_str()];
    all.extend_from_slice(words);
    let mut cmd = db.command(TL);
    cmd.current_dir(db.dir.path());
    let run = ask(cmd, shell, &all);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
    run.stdout
}

/// Bash's answer as a list (its script splits at vertical tabs).
#[track_caller]
fn bash(db: &Db, words: &[&str]) -> Vec<String> {
    let out = offered(db, "bash", words);
    if out.is_empty() {
        return Vec::new();
    }
    out.split('\x0b').map(String::from).collect()
}

/// tl0 with three messages on main and a branch alt at n2; tl1, titled and empty.
fn conversation() -> Db {
    let db = Db::created_at(common::CLOCK);
    db.append("user", "Plan a trip to Lisbon", 5);
    db.append("assistant", "Three days:\nAlfama, Belém\tand Sintra.", 9);
    db.append("user", "Add a day in Porto", 5);
    db.tl(&["fork", "--node", "n2", "--name", "alt"])
        .ok(r#"{"branch":"alt","head":"n2"}"#);
    db.tl(&["create", "--title", "Recipes"])
        .ok(r#"{"timeline_id":"tl1"}"#);
    db
}

/// Every file of a directory with its bytes: what completing must leave as it was.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let bytes = std::fs::read(e.path()).unwrap_or_default();
            (e.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect()
}

on_every_engine! {
    #[test]
    fn node_ids_newest_first_in_each_shell_format() {
        let db = conversation();
        assert_eq!(bash(&db, &["context", "--node", ""]), ["n3", "n2", "n1"]);
        // The help beside each ID: role and the start of the text on one line.
        assert_eq!(
            offered(&db, "fish", &["context", "--node", ""]),
            "n3\tuser: Add a day in Porto\n\
             n2\tassistant: Three days: Alfama, Belém and Sintra.\n\
             n1\tuser: Plan a trip to Lisbon\n"
        );
        assert_eq!(
            offered(&db, "powershell", &["budget", "--node", "n"]),
            offered(&db, "fish", &["budget", "--node", "n"])
        );
        assert_eq!(
            offered(&db, "zsh", &["pin", "--node", ""]),
            "n3:user: Add a day in Porto\n\
             n2:assistant: Three days: Alfama, Belém and Sintra.\n\
             n1:user: Plan a trip to Lisbon"
        );
        assert_eq!(offered(&db, "elvish", &["node", "--node", ""]), "n3\nn2\nn1");
        // Wherever the command line puts --db, and with --node=.
        let path = db.path.display().to_string();
        let mut cmd = db.command(TL);
        cmd.current_dir(db.dir.path());
        let run = ask(cmd, "fish", &["tl", "log", "--db", &path, "--node=n1"]);
        assert_eq!(
            (run.code, run.stdout.as_str(), run.stderr.as_str()),
            (0, "--node=n1\tuser: Plan a trip to Lisbon\n", "")
        );
    }

    #[test]
    fn a_typed_beginning_filters_node_ids() {
        let db = conversation();
        for i in 4..=12 {
            db.append("user", &format!("message {i}"), 1);
        }
        assert_eq!(bash(&db, &["context", "--node", "n1"]), ["n12", "n11", "n10", "n1"]);
        assert_eq!(bash(&db, &["context", "--node", "n12"]), ["n12"]);
        assert_eq!(bash(&db, &["context", "--node", "n13"]), Vec::<String>::new());
        // No ID starts with a zero after n, and n0 (the root) is not a message.
        assert_eq!(bash(&db, &["context", "--node", "n0"]), Vec::<String>::new());
        assert_eq!(bash(&db, &["context", "--node", "main"]), Vec::<String>::new());
        // Every node-ID flag, also the last item of a list (without the IDs already listed).
        assert_eq!(bash(&db, &["summarize", "--from", "n12"]), ["n12"]);
        assert_eq!(bash(&db, &["search", "--under", "n11"]), ["n11"]);
        assert_eq!(
            bash(&db, &["summarize", "--derived-from", "n10,n1"]),
            ["n10,n12", "n10,n11", "n10,n1"]
        );
    }

    #[test]
    fn branch_names_where_an_existing_branch_is_meant() {
        let db = conversation();
        for words in [
            ["switch", "--name", ""],
            ["drop-branch", "--name", ""],
            ["rename-branch", "--name", ""],
            ["archive-check", "--name", ""],
            ["archive-branch", "--name", ""],
            ["append", "--branch", ""],
            ["log", "--branch", ""],
            ["search", "--branch", ""],
        ] {
            assert_eq!(bash(&db, &words), ["main", "alt"], "{words:?}");
        }
        assert_eq!(bash(&db, &["switch", "--name", "a"]), ["alt"]);
        assert_eq!(
            offered(&db, "fish", &["switch", "--name", ""]),
            "main\thead n3, current\nalt\thead n2\n"
        );
        // A new name has nothing to offer.
        assert_eq!(bash(&db, &["fork", "--name", ""]), Vec::<String>::new());
        assert_eq!(bash(&db, &["rename-branch", "--name", "main", "--to", ""]), Vec::<String>::new());
        // diff compares branches or nodes: both are offered, branches first.
        assert_eq!(bash(&db, &["diff", "--left", ""]), ["main", "alt", "n3", "n2", "n1"]);
        assert_eq!(bash(&db, &["diff", "--right", "n2"]), ["n2"]);
    }

    #[test]
    fn restore_branch_offers_the_archived_branches() {
        let db = Db::created_at(common::CLOCK);
        db.append("user", "one", 1);
        db.tl(&["fork", "--node", "n1", "--name", "old"])
            .ok(r#"{"branch":"old","head":"n1"}"#);
        db.tl(&["summarize", "--from", "n1", "--to", "n1", "--summary", "s", "--tokens", "1"])
            .ok(r#"{"node":"n2"}"#);
        db.tl(&["archive-branch", "--name", "old"]).ok(r#"{"archived":[]}"#);
        assert_eq!(
            offered(&db, "fish", &["restore-branch", "--branch", ""]),
            "old\tarchived, head n1\n"
        );
        assert_eq!(bash(&db, &["switch", "--name", ""]), ["main"]);
    }

    #[test]
    fn timeline_ids_and_the_timeline_nodes_come_from() {
        let db = conversation();
        assert_eq!(
            offered(&db, "fish", &["--timeline", ""]),
            "tl1\tRecipes (0 messages)\ntl0\t3 messages\n"
        );
        assert_eq!(bash(&db, &["context", "--timeline", "t"]), ["tl1", "tl0"]);
        assert_eq!(bash(&db, &["context", "--timeline", "tl0"]), ["tl0"]);
        db.tl(&["--timeline", "tl1", "append", "--role", "user", "--text", "Soup"]).json();
        assert_eq!(bash(&db, &["--timeline", "tl1", "context", "--node", ""]), ["n1"]);
        assert_eq!(bash(&db, &["context", "--timeline=tl1", "--node", ""]), ["n1"]);
        assert_eq!(bash(&db, &["--timeline", "tl1", "switch", "--name", ""]), ["main"]);
        // An unknown timeline has nothing to offer.
        assert_eq!(bash(&db, &["--timeline", "tl7", "context", "--node", ""]), Vec::<String>::new());
    }

    #[test]
    fn timeline_db_names_the_database_when_no_db_is_given() {
        let db = conversation();
        let mut cmd = db.command(TL);
        cmd.current_dir(db.dir.path()).env("TIMELINE_DB", &db.path);
        let run = ask(cmd, "bash", &["tl", "switch", "--name", ""]);
        assert_eq!((run.code, run.stdout.as_str(), run.stderr.as_str()), (0, "main\x0balt", ""));
    }

    #[test]
    fn names_that_need_quotes_are_quoted_where_the_shell_does_not() {
        let db = conversation();
        db.tl(&["fork", "--node", "n1", "--name", "my idea"]).json();
        db.tl(&["fork", "--node", "n1", "--name", "it's"]).json();
        assert_eq!(bash(&db, &["switch", "--name", "m"]), ["main", "'my idea'"]);
        // What bash passes while a quote is open, or with a backslash.
        assert_eq!(bash(&db, &["switch", "--name", "'my"]), ["'my idea'"]);
        assert_eq!(bash(&db, &["switch", "--name", "my\\ "]), ["'my idea'"]);
        assert_eq!(bash(&db, &["switch", "--name", "it"]), [r"'it'\''s'"]);
        assert_eq!(
            offered(&db, "powershell", &["switch", "--name", "i"]),
            "'it''s'\thead n1\n"
        );
        // zsh and fish quote a candidate themselves.
        assert_eq!(offered(&db, "fish", &["switch", "--name", "my"]), "my idea\thead n1\n");
        assert_eq!(offered(&db, "zsh", &["switch", "--name", "my"]), "my idea:head n1");
    }

    #[test]
    fn completing_changes_no_file() {
        let db = conversation();
        // A JSON snapshot copied from elsewhere has no lock file yet; completing creates none.
        let _ = std::fs::remove_file(format!("{}.lock", db.path.display()));
        // (The files first: reading the stored state opens the database.)
        let before = (files(db.dir.path()), db.bytes());
        assert_eq!(bash(&db, &["context", "--node", ""]), ["n3", "n2", "n1"]);
        assert_eq!(bash(&db, &["switch", "--name", ""]), ["main", "alt"]);
        assert_eq!(bash(&db, &["--timeline", ""]), ["tl1", "tl0"]);
        assert!((files(db.dir.path()), db.bytes()) == before, "completing changed the database");
    }

    #[test]
    fn a_missing_or_damaged_database_offers_nothing_and_stays_as_it_was() {
        let db = Db::new();
        let words = ["context", "--node", ""];
        for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
            assert_eq!(offered(&db, shell, &words), "", "{shell}");
        }
        assert_eq!(offered(&db, "bash", &["switch", "--name", ""]), "");
        assert!(files(db.dir.path()).is_empty(), "{:?}", files(db.dir.path()).keys());
        assert!(db.bytes().is_empty(), "completing created the database");
        let damaged: &[&[u8]] = match common::engine() {
            // A damaged file, or on a server a schema that a newer Timeline wrote.
            common::Engine::Postgres => {
                db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
                db.append("user", "hello", 1);
                assert_eq!(bash(&db, &words), ["n1"]);
                let nodes = common::pg_raw::query_i64(&db, "SELECT count(*) FROM nodes");
                common::pg_raw::execute(&db, "UPDATE state SET schema_version = 99");
                let before = db.tl(&["timelines"]);
                assert_eq!(before.code, 3, "{before:?}");
                for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
                    assert_eq!(offered(&db, shell, &words), "", "{shell}");
                }
                assert_eq!(common::pg_raw::query_i64(&db, "SELECT schema_version FROM state"), 99);
                assert_eq!(common::pg_raw::query_i64(&db, "SELECT count(*) FROM nodes"), nodes);
                &[]
            }
            _ => &[&b"not a database"[..], b"{\"format_version\": 1,", b"", b"SQLite format 3\0 and then garbage"],
        };
        for &damaged in damaged {
            std::fs::write(&db.path, damaged).unwrap();
            let before = files(db.dir.path());
            for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
                assert_eq!(offered(&db, shell, &words), "", "{shell} {damaged:?}");
            }
            assert_eq!(files(db.dir.path()), before);
        }
        // Flags are still offered.
        assert_eq!(bash(&db, &["context", "--n"]), ["--node"]);
    }
}

/// A command line as a shell's script passes it, run in `dir` with no TIMELINE_DB and `dir/home` as
/// the home directory (where no default database exists).
fn ask_in(dir: &Path, shell: &str, words: &[&str]) -> Run {
    let mut cmd = Command::new(TL);
    cmd.env_remove("TIMELINE_DB")
        .env_remove("XDG_DATA_HOME")
        .env_remove("APPDATA")
        .env("HOME", dir.join("home"))
        .env("USERPROFILE", dir.join("home"))
        .current_dir(dir);
    ask(cmd, shell, words)
}

#[track_caller]
fn lines(run: &Run) -> Vec<&str> {
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
    run.stdout.lines().collect()
}

#[test]
fn commands_flags_and_allowed_values_are_completed_as_before() {
    let dir = TempDir::new();
    // Every command of the spec is offered (a grouped one under its group).
    let commands = ask_in(dir.path(), "fish", &["tl", ""]);
    let names: Vec<&str> = lines(&commands)
        .iter()
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    for op in &timeline::spec::spec().operations {
        let first = op.cli.split(' ').next().unwrap();
        assert!(names.contains(&first), "no {}: {names:?}", op.cli);
    }
    let db_commands = ask_in(dir.path(), "bash", &["tl", "db", "i"]);
    assert_eq!(db_commands.stdout, "info");
    assert_eq!(ask_in(dir.path(), "bash", &["tl", "con"]).stdout, "context");
    assert_eq!(
        ask_in(dir.path(), "bash", &["tl", "budget", "--"])
            .stdout
            .split('\x0b')
            .collect::<Vec<_>>(),
        [
            "--node",
            "--max",
            "--dry-run",
            "--explain",
            "--db",
            "--timeline",
            "--idempotency-key",
            "--help"
        ]
    );
    assert_eq!(
        ask_in(dir.path(), "fish", &["tl", "append", "--role", ""]).stdout,
        "user\nassistant\nsystem\nsummary\n"
    );
    assert_eq!(
        ask_in(dir.path(), "bash", &["tl", "export", "--format", "a"]).stdout,
        "ascii\x0banthropic"
    );
    assert_eq!(
        ask_in(dir.path(), "bash", &["tl", "completions", ""]).stdout,
        "bash\x0bzsh\x0bfish\x0bpowershell\x0belvish\x0b--db\x0b--timeline\x0b--idempotency-key\x0b--help"
    );
    // Paths: file names in the current directory.
    std::fs::write(dir.path().join("notes.json"), "{}").unwrap();
    assert_eq!(
        ask_in(dir.path(), "bash", &["tl", "--db", "no"]).stdout,
        "notes.json"
    );
    // Neither a database nor the default's directory was created.
    assert!(!dir.path().join("home").exists());
}

#[test]
fn the_default_database_is_read_but_its_directory_never_created() {
    let dir = TempDir::new();
    std::fs::create_dir(dir.path().join("home")).unwrap();
    let run = ask_in(dir.path(), "bash", &["tl", "context", "--node", ""]);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (0, "", "")
    );
    assert_eq!(
        std::fs::read_dir(dir.path().join("home")).unwrap().count(),
        0
    );
    // The database of users of the original tool, ~/.timeline.json, when it exists.
    let legacy = dir.path().join("home").join(".timeline.json");
    let out = Command::new(TL)
        .env_remove("COMPLETE")
        .args(["--db", legacy.to_str().unwrap(), "create"])
        .output()
        .unwrap();
    assert!(out.status.success());
    Command::new(TL)
        .env_remove("COMPLETE")
        .args([
            "--db",
            legacy.to_str().unwrap(),
            "append",
            "--role",
            "user",
            "--text",
            "hi",
        ])
        .output()
        .unwrap();
    let run = ask_in(dir.path(), "fish", &["tl", "context", "--node", ""]);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (0, "n1\tuser: hi\n", "")
    );
    // ~/ in --db is the home directory, although the shell has not expanded it yet.
    let mut cmd = Command::new(TL);
    cmd.env("HOME", dir.path().join("home"))
        .env("USERPROFILE", dir.path().join("home"))
        .current_dir(dir.path());
    let run = ask(
        cmd,
        "bash",
        &["tl", "--db", "~/.timeline.json", "context", "--node", ""],
    );
    assert_eq!((run.code, run.stdout.as_str()), (0, "n1"), "{run:?}");
}

/// An SQLite database of an older schema is migrated when `tl` opens it: completion leaves it alone.
#[test]
fn an_older_sqlite_database_is_not_migrated_by_completion() {
    common::use_engine(common::Engine::Sqlite);
    let db = conversation();
    {
        let conn = rusqlite::Connection::open(&db.path).unwrap();
        conn.execute_batch(
            "DROP TABLE search_pending; DROP INDEX nodes_summaries; DROP INDEX nodes_pinned; DROP INDEX nodes_by_real_start; ALTER TABLE nodes DROP COLUMN jump; ALTER TABLE nodes DROP COLUMN path_min_tokens; DROP INDEX nodes_with_newer_parent; DROP INDEX imports_by_digest; ALTER TABLE nodes DROP COLUMN provenance; DROP TABLE search_index; DROP TABLE search_docs; PRAGMA user_version = 2;",
        )
        .unwrap();
    }
    let before = files(db.dir.path());
    assert_eq!(bash(&db, &["context", "--node", ""]), Vec::<String>::new());
    assert_eq!(files(db.dir.path()), before);
    // tl itself migrates it on first use, and then it is completed.
    db.tl(&["branches"]).json();
    assert_eq!(bash(&db, &["context", "--node", ""]), ["n3", "n2", "n1"]);
}

#[test]
fn complete_without_words_prints_the_script_and_other_values_run_tl() {
    let dir = TempDir::new();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let script = Command::new(TL).env("COMPLETE", shell).output().unwrap();
        let printed = Command::new(TL)
            .env_remove("COMPLETE")
            .args(["completions", shell])
            .output()
            .unwrap();
        assert_eq!(script.stdout, printed.stdout, "{shell}");
    }
    // A shell named by its path, as $SHELL holds it.
    let run = ask_in(dir.path(), "/bin/bash", &["tl", "con"]);
    assert_eq!(run.stdout, "context");
    // COMPLETE with another meaning leaves tl alone.
    for value in ["", "0", "1", "tcsh"] {
        let out = Command::new(TL)
            .env("COMPLETE", value)
            .arg("--version")
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            format!("tl {}\n", env!("CARGO_PKG_VERSION")),
            "COMPLETE={value}"
        );
    }
}

/// The bash script itself, sourced in a real bash with `tl` on the PATH: what a Tab puts in
/// COMPREPLY.
#[cfg(unix)]
#[test]
fn the_bash_script_completes_from_the_database() {
    if Command::new("bash").arg("--version").output().is_err() {
        eprintln!("no bash here; skipped");
        return;
    }
    common::use_engine(common::Engine::Sqlite);
    let db = conversation();
    db.tl(&["fork", "--node", "n1", "--name", "my idea"]).json();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("generated/completions/tl.bash");
    let bin = Path::new(TL).parent().unwrap();
    let tab = |line: &str| {
        // COMP_WORDS as bash splits the line; the word under the cursor is also passed as $2.
        let program = format!(
            r#"source "$1"
COMP_WORDS=({line}); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 )); COMP_TYPE=9
_clap_complete_tl tl "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\n' "${{COMPREPLY[@]}}""#
        );
        let out = db
            .command("bash")
            .env(
                "PATH",
                format!(
                    "{}:{}",
                    bin.display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
            )
            .current_dir(db.dir.path())
            .args(["--norc", "-c", &program, "bash"])
            .arg(&script)
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stderr), "");
        String::from_utf8(out.stdout).unwrap()
    };
    let db_word = db.path.display().to_string();
    assert_eq!(
        tab(&format!("tl --db '{db_word}' context --node ''")),
        "n3\nn2\nn1\n"
    );
    assert_eq!(
        tab(&format!("tl --db '{db_word}' switch --name ''")),
        "main\nalt\n'my idea'\n"
    );
    assert_eq!(
        tab(&format!("tl --db '{db_word}' switch --name a")),
        "alt\n"
    );
    assert_eq!(tab("tl con"), "context\n");
}

/// A writer stopped with committed changes still in the -wal file (here: a copy made while a
/// `tl-mcp` session was open): completing neither brings them into the database file nor creates a
/// -shm file, so it offers what the database file holds; the next command brings them in.
#[test]
fn completing_leaves_a_stopped_writers_wal_file_alone() {
    common::use_engine(common::Engine::Sqlite);
    let db = conversation();
    let mut session = common::McpSession::start(&db);
    session.ok(
        "timeline_append",
        serde_json::json!({"timeline_id": "tl0", "role": "user", "text": "four"}),
    );
    let copy = Db::created_at(common::CLOCK);
    for suffix in ["", "-wal"] {
        std::fs::copy(
            format!("{}{suffix}", db.path.display()),
            format!("{}{suffix}", copy.path.display()),
        )
        .unwrap();
    }
    drop(session);
    assert!(
        std::fs::metadata(format!("{}-wal", copy.path.display()))
            .unwrap()
            .len()
            > 0
    );
    let before = files(copy.dir.path());
    assert_eq!(bash(&copy, &["context", "--node", ""]), ["n3", "n2", "n1"]);
    assert_eq!(files(copy.dir.path()), before);
    copy.tl(&["node", "--node", "n4"]).json();
    assert_eq!(
        bash(&copy, &["context", "--node", ""]),
        ["n4", "n3", "n2", "n1"]
    );
}
