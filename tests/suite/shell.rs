//! Shell integration through the real `tl` binary: `tl completions SHELL` and `tl man` print exactly
//! the checked-in files under `generated/` (which the release archives carry), usage lines show the
//! required flags, and `tl demo` runs the tour in a new database. What the completion scripts get
//! back at each Tab is tested in `tests/suite/completion.rs`. Golden files: `generated/completions/`,
//! `generated/man/tl.1` (kept fresh by `cargo test --test suite generated::`) and `tests/golden/demo.txt`.

use crate::common;

use common::{Db, Run, TL, TempDir};
use std::path::Path;
use std::process::{Command, Stdio};

/// Run `tl` with no database flag and no TIMELINE_DB, in `dir`.
fn tl(dir: &Path, args: &[&str]) -> Run {
    let out = Command::new(TL)
        .env_remove("TIMELINE_DB")
        .env_remove("TIMELINE_NOW")
        .env("HOME", dir.join("home"))
        .env("USERPROFILE", dir.join("home"))
        .env("TMPDIR", dir)
        .env("TEMP", dir)
        .env("TMP", dir)
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    Run::from(out)
}

fn repo_file(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[track_caller]
fn text_ok(run: &Run) -> &str {
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
    &run.stdout
}

#[test]
fn completions_are_the_checked_in_files() {
    let dir = TempDir::new();
    let files = [
        ("bash", "generated/completions/tl.bash"),
        ("zsh", "generated/completions/_tl"),
        ("fish", "generated/completions/tl.fish"),
        ("powershell", "generated/completions/_tl.ps1"),
        ("elvish", "generated/completions/tl.elv"),
    ];
    assert_eq!(files, timeline::cli::shell::COMPLETION_FILES);
    for (shell, file) in files {
        let run = tl(dir.path(), &["completions", shell]);
        assert_eq!(text_ok(&run), repo_file(file), "tl completions {shell}");
        // The script asks `tl` on the PATH for the candidates at each Tab (tests/suite/completion.rs
        // checks the answers); it lists no command itself, so it stays right after an upgrade.
        let calls: &[&str] = match shell {
            "bash" => &["COMPLETE=\"bash\" \\\n", "\"tl\" -- \"${words[@]}\""],
            "zsh" => &["COMPLETE=\"zsh\" \\\n", "tl -- \"${words[@]}\""],
            "fish" => &["COMPLETE=fish tl -- "],
            "powershell" => &["$env:COMPLETE = \"powershell\";", "& tl -- $args"],
            _ => &["COMPLETE=\"elvish\" tl -- $@words"],
        };
        for call in calls {
            assert!(run.stdout.contains(call), "{shell}: {call}");
        }
        assert!(!run.stdout.contains("context"), "{shell}");
    }
    // zsh: `#compdef` first, so that the file works from the fpath, and completing on the first Tab
    // there too (the file's body is then the completion function).
    let zsh = repo_file("generated/completions/_tl");
    assert!(zsh.starts_with("#compdef tl\n"), "{zsh}");
    assert!(
        zsh.ends_with(
            "compdef _clap_dynamic_completer_tl tl\nif [[ ${funcstack[1]} == _tl ]]; then\n    _clap_dynamic_completer_tl \"$@\"\nfi\n"
        ),
        "{zsh}"
    );
    let bash = repo_file("generated/completions/tl.bash");
    assert!(bash.contains("complete -o nospace -o bashdefault -o nosort -F _clap_complete_tl tl"));
}

#[test]
fn completions_errors() {
    let dir = TempDir::new();
    let run = tl(dir.path(), &["completions"]);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (
            2,
            "",
            "{\"error\":\"invalid argument <SHELL>: required (The shell to print the script for.)\"}\n"
        )
    );
    let run = tl(dir.path(), &["completions", "tcsh"]);
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (
            2,
            "{\"error\":\"invalid argument <SHELL>: must be one of bash, zsh, fish, powershell, elvish, got \\\"tcsh\\\"\"}\n"
        )
    );
    let run = tl(dir.path(), &["completions", "bash", "--timeline", "tl0"]);
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (
            2,
            "{\"error\":\"invalid argument --timeline: completions does not use a timeline\"}\n"
        )
    );
    let run = tl(dir.path(), &["man", "--idempotency-key", "k1"]);
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (
            2,
            "{\"error\":\"invalid argument --idempotency-key: man does not take an idempotency key; it changes nothing in your databases, so it is always safe to run again\"}\n"
        )
    );
    // No database is read or created: the home directory stays empty.
    assert!(!dir.path().join("home").exists());
}

#[test]
fn man_page_is_the_checked_in_file() {
    let dir = TempDir::new();
    let run = tl(dir.path(), &["man"]);
    let page = text_ok(&run);
    assert_eq!(page, repo_file("generated/man/tl.1"));
    let headings: Vec<&str> = page.lines().filter(|l| l.starts_with(".SH ")).collect();
    assert_eq!(
        headings,
        [
            ".SH NAME",
            ".SH SYNOPSIS",
            ".SH DESCRIPTION",
            ".SH OPTIONS",
            ".SH COMMANDS",
            ".SH \"EXIT STATUS\"",
            ".SH ENVIRONMENT",
            ".SH \"SEE ALSO\"",
            ".SH VERSION",
        ]
    );
    assert!(page.starts_with(".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n.TH tl 1  \"tl "));
    // The budget entry: its usage line with the required flags, its summary and its flags.
    let budget = "\
.TP
\\fBtl budget\\fR [OPTIONS] \\-\\-node <NID> \\-\\-max <N>
Fit the context of a node into a token budget with summaries and placeholders.
.RS
.TP
\\fB\\-\\-node\\fR \\fI<NID>\\fR
The target message; it is always kept verbatim. (required)
.TP
\\fB\\-\\-max\\fR \\fI<N>\\fR
The token budget. (required)
.TP
\\fB\\-\\-dry\\-run\\fR
Show the layout without writing anything: a placeholder that would be created appears with node null and the range it would cover (from, to), and summaries_created lists only existing placeholders. An idempotency key has no effect.
.TP
\\fB\\-\\-explain\\fR
Add an explanation: for every message of the path, in order, whether it was kept, covered by a summary or by a placeholder, and why. If the budget is infeasible, the error data holds the smallest layout (messages) and its explanation.
.RE
";
    assert!(page.contains(budget), "{page}");
    let completions = "\
.TP
\\fBtl completions\\fR [OPTIONS] <SHELL>
Print a completion script for a shell (bash, zsh, fish, powershell or elvish).
.RS
.TP
\\fI<SHELL>\\fR
The shell to print the script for. [bash, zsh, fish, powershell, elvish] (required)
.RE
";
    assert!(page.contains(completions), "{page}");
    let exit_status = "\
.TP
\\fB1\\fR
archived, budget_infeasible, conflict, limit_exceeded, not_eligible, not_found, output
.TP
\\fB2\\fR
invalid_argument
.TP
\\fB3\\fR
database
";
    assert!(page.contains(exit_status), "{page}");
    assert!(page.ends_with(&format!(".SH VERSION\nv{}\n", env!("CARGO_PKG_VERSION"))));
}

/// Every usage line names the flags its command requires (clap is told nothing is required: the spec
/// validator checks, so the line is rendered from the spec).
#[test]
fn usage_lines_show_required_flags() {
    let dir = TempDir::new();
    let expected = [
        ("create", "tl create [OPTIONS]"),
        (
            "append",
            "tl append [OPTIONS] --role <ROLE> <--text <TEXT>|--text-file <PATH>>",
        ),
        ("budget", "tl budget [OPTIONS] --node <NID> --max <N>"),
        (
            "summarize",
            "tl summarize [OPTIONS] --from <NID> --to <NID> <--summary <TEXT>|--summary-file <PATH>>",
        ),
        ("export", "tl export [OPTIONS] --format <EXPORT_FORMAT>"),
        ("completions", "tl completions [OPTIONS] <SHELL>"),
        ("man", "tl man [OPTIONS]"),
    ];
    for (command, usage) in expected {
        let run = tl(dir.path(), &[command, "--help"]);
        let line = text_ok(&run)
            .lines()
            .find(|l| l.starts_with("Usage: "))
            .unwrap_or_else(|| panic!("{run:?}"));
        assert_eq!(line, format!("Usage: {usage}"));
    }
}

#[test]
fn demo_runs_the_tour_in_a_new_database() {
    let db = Db::new();
    let run = db.tl(&["demo"]);
    let page = db.path.with_extension("html");
    let transcript = text_ok(&run)
        .replace(&page.display().to_string(), "<PAGE>")
        .replace(&db.path.display().to_string(), "<DB>");
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/demo.txt");
    if std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1") {
        std::fs::write(&golden, &transcript).unwrap();
    }
    assert_eq!(
        transcript,
        std::fs::read_to_string(&golden).unwrap(),
        "run `UPDATE_GOLDEN=1 cargo test --test suite shell::` to rewrite tests/golden/demo.txt after checking the change"
    );
    // The database is left to explore, and its tree as a page.
    assert!(
        std::fs::read_to_string(&page)
            .unwrap()
            .starts_with("<!DOCTYPE html>")
    );
    db.tl(&["branches"]).ok(r#"[{"name":"main","head":"n4","current":false},{"name":"alternative","head":"n5","current":true}]"#);
    // A second run refuses to touch the now existing database.
    let again = db.tl(&["demo"]);
    again.err(
        1,
        &format!(
            "{{\"error\":{}}}",
            serde_json::Value::String(format!(
                "{} already exists; the demo writes a new database and never changes an existing one: pass --db with a path that does not exist yet, or leave --db out to use a new temporary directory",
                db.path.display()
            ))
        ),
    );
}

#[test]
fn demo_refuses_to_start_when_its_page_exists() {
    let db = Db::new();
    let page = db.path.with_extension("html");
    std::fs::write(&page, "mine").unwrap();
    db.tl(&["demo"]).err(
        1,
        &format!(
            "{{\"error\":{}}}",
            serde_json::Value::String(format!(
                "{} already exists; the demo ends by writing its tree there as an HTML page and never overwrites a file: pass --db with another path, or leave --db out to use a new temporary directory",
                page.display()
            ))
        ),
    );
    assert!(!db.path.exists());
    assert_eq!(std::fs::read_to_string(&page).unwrap(), "mine");
}

#[test]
fn demo_without_db_uses_a_new_temporary_directory_not_timeline_db() {
    let dir = TempDir::new();
    let elsewhere = dir.path().join("mine.json");
    let out = Command::new(TL)
        .env("TIMELINE_DB", &elsewhere)
        .env("TMPDIR", dir.path())
        .env("TEMP", dir.path())
        .env("TMP", dir.path())
        .arg("demo")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let first = stdout.lines().next().unwrap();
    let path = first
        .strip_prefix("Timeline demo: a short tour in ")
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(Path::new(path).starts_with(dir.path()), "{path}");
    assert!(Path::new(path).is_file(), "{path}");
    assert!(!elsewhere.exists());
}
