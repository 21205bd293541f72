//! Freshness of the files under generated/: they are rendered from spec/timeline.json in memory and
//! compared with the checked-in copies. Locally a stale file is rewritten and the test fails once; under
//! CI=true it only fails, naming the command to run. The docs are checked here too: the MCP snippets
//! are run as written.

use crate::common;

use std::path::Path;

#[test]
fn generated_files_are_fresh() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    let mut stale = Vec::new();
    for (relative, expected) in timeline::codegen::render_all() {
        let path = root.join(relative);
        let actual = std::fs::read_to_string(&path).unwrap_or_default();
        if actual != expected {
            let first_difference = actual
                .lines()
                .zip(expected.lines())
                .enumerate()
                .find(|(_, (a, e))| a != e)
                .map(|(i, (a, e))| format!("line {}:\n  checked in: {a}\n  from spec:  {e}", i + 1))
                .unwrap_or_else(|| "the files differ in length".to_string());
            if !in_ci {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &expected).unwrap();
            }
            stale.push(format!("{relative} ({first_difference})"));
        }
    }
    assert!(
        stale.is_empty(),
        "generated files were stale: {}\n{}",
        stale.join("\n"),
        if in_ci {
            "Run `cargo test --test suite generated::` locally and commit the regenerated files."
        } else {
            "They have been regenerated; review and commit them, then run the tests again."
        }
    );
}

/// The text of a Markdown file of the repository.
fn doc(relative: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)).unwrap()
}

/// The part of `text` from the heading `heading` to the next heading of the same level.
#[cfg(target_os = "linux")]
fn section<'a>(text: &'a str, heading: &str) -> &'a str {
    let start = text
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("no heading {heading:?}"));
    let level = heading.split(' ').next().unwrap();
    let rest = &text[start + heading.len() + 2..];
    let end = rest.find(&format!("\n{level} ")).unwrap_or(rest.len());
    &rest[..end]
}

/// The fenced blocks of `text` whose info string is `info`, each without its fences.
fn fenced<'a>(text: &'a str, info: &str) -> Vec<&'a str> {
    let open = format!("```{info}\n");
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(&open) {
        let body = &rest[start + open.len()..];
        let end = body.find("```\n").expect("a fenced block is closed");
        blocks.push(&body[..end]);
        rest = &body[end..];
    }
    blocks
}

/// The JSON configuration in README and docs/mcp.md: the program where README's Install puts it, and no
/// database of its own; run as written (with YOUR_NAME's home a temporary directory), the client sees
/// the timelines `tl` made with its default database, and `tl` sees what the client adds.
// Linux: the snippet, the install folder and the default database are the Linux ones.
#[cfg(target_os = "linux")]
#[test]
fn the_mcp_snippets_follow_install_and_share_the_default_database() {
    use common::{McpSession, Run, TL, TL_MCP, TempDir};
    use serde_json::{Value, json};
    use std::process::{Command, Stdio};

    let readme = doc("README.md");
    let install = section(&readme, "## Install");
    // Install copies both programs into ~/.local/bin/ (Linux and macOS) and %LOCALAPPDATA%\Programs\timeline.
    let copy = fenced(install, "sh")[0].lines().nth(1).unwrap();
    assert!(copy.ends_with(" ~/.local/bin/"), "{copy}");
    let windows_copy = fenced(install, "powershell")[0];
    assert!(
        windows_copy.contains(r#"Copy-Item timeline-x86_64-pc-windows-msvc\*.exe "$env:LOCALAPPDATA\Programs\timeline\""#),
        "{windows_copy}"
    );
    let mcp_readme = section(&readme, "## Use with an MCP client");
    let mcp_doc = doc("docs/mcp.md");
    let mcp_doc = section(&mcp_doc, "## Use with an MCP client");
    for text in [mcp_readme, mcp_doc] {
        assert!(
            text.contains("claude mcp add --scope user timeline -- ~/.local/bin/tl-mcp\n"),
            "{text}"
        );
        assert!(
            text.contains(
                r#""C:\\Users\\YOUR_NAME\\AppData\\Local\\Programs\\timeline\\tl-mcp.exe""#
            ),
            "{text}"
        );
    }
    let configs: Vec<Value> = [mcp_readme, mcp_doc]
        .iter()
        .map(|text| {
            let blocks = fenced(text, "json");
            assert_eq!(blocks.len(), 1, "{text}");
            serde_json::from_str(blocks[0]).expect("the snippet is JSON")
        })
        .collect();
    assert_eq!(configs[0], configs[1], "README and docs/mcp.md differ");
    let server = &configs[0]["mcpServers"]["timeline"];
    assert_eq!(
        server,
        &json!({"command": "/home/YOUR_NAME/.local/bin/tl-mcp", "args": []}),
        "the client starts the installed program, with no --db and no TIMELINE_DB of its own"
    );

    // YOUR_NAME's home: tl-mcp installed as Install says, and tl used as a terminal user would.
    let dir = TempDir::new();
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".local/bin")).unwrap();
    std::os::unix::fs::symlink(TL_MCP, home.join(".local/bin/tl-mcp")).unwrap();
    let user = |cmd: &mut Command| {
        cmd.env_clear()
            .env("HOME", &home)
            .env("PATH", "/usr/bin:/bin")
            .current_dir(dir.path());
    };
    let tl = |args: &[&str]| {
        let mut cmd = Command::new(TL);
        user(&mut cmd);
        Run::from(cmd.args(args).stdin(Stdio::null()).output().unwrap())
    };
    tl(&["create", "--title", "From the terminal"]).ok(r#"{"timeline_id":"tl0"}"#);
    let command = server["command"]
        .as_str()
        .unwrap()
        .replace("/home/YOUR_NAME", home.to_str().unwrap());
    let mut client = Command::new(command);
    user(&mut client);
    client.args(
        server["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap()),
    );
    let mut mcp = McpSession::spawn(client);
    let listed = mcp.ok("timeline_list", json!({}));
    assert_eq!(
        listed["timelines"][0]["title"],
        json!("From the terminal"),
        "{listed}"
    );
    mcp.ok(
        "timeline_append",
        json!({"timeline_id": "tl0", "role": "user", "text": "From the client"}),
    );
    drop(mcp);
    tl(&["node", "--node", "n1"]).json()["text"]
        .as_str()
        .filter(|t| *t == "From the client")
        .expect("tl reads what the client appended");
    assert!(home.join(".local/share/timeline/timeline.db").exists());
}

/// The words of a `$ tl ...` line as a POSIX shell splits them: blanks separate, '...' and "..."
/// quote (in "...", a backslash escapes `"` and `\`); nothing is expanded.
fn shell_words(line: &str) -> Vec<String> {
    let (mut words, mut word, mut in_word) = (Vec::new(), String::new(), false);
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' if in_word => {
                words.push(std::mem::take(&mut word));
                in_word = false;
            }
            ' ' | '\t' => {}
            '\'' => {
                in_word = true;
                word.extend(chars.by_ref().take_while(|&c| c != '\''));
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => match chars.next() {
                            Some(n @ ('"' | '\\')) => word.push(n),
                            Some(n) => word.extend(['\\', n]),
                            None => word.push('\\'),
                        },
                        c => word.push(c),
                    }
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// Every ```console block of README.md and docs/*.md runs as written: each `$ tl ...` line is run and
/// what it prints (standard output, then standard error) must be exactly the lines under it. The
/// blocks of one file share one new database (`TIMELINE_DB`) in order, with the tests' fixed clock.
#[test]
fn console_examples_in_the_docs_print_what_they_show() {
    use common::{CLOCK, Run, TL, TempDir};
    use std::process::{Command, Stdio};

    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<_> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    let (mut commands, mut failures) = (0, Vec::new());
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let name = file.strip_prefix(root).unwrap().display().to_string();
        let dir = TempDir::new();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        for block in fenced(&text, "console") {
            let line_of = |part: &str| {
                let at = part.as_ptr() as usize - text.as_ptr() as usize;
                text[..at].lines().count() + 1
            };
            let mut steps: Vec<(&str, String)> = Vec::new();
            for line in block.lines() {
                match line.strip_prefix("$ ") {
                    Some(command) => steps.push((command, String::new())),
                    None => {
                        let (_, output) = steps.last_mut().unwrap_or_else(|| {
                            panic!("{name}:{}: output before the first $ line", line_of(line))
                        });
                        output.push_str(line);
                        output.push('\n');
                    }
                }
            }
            for (command, expected) in steps {
                let words = shell_words(command);
                assert_eq!(
                    words.first().map(String::as_str),
                    Some("tl"),
                    "{name}:{}: only tl commands run",
                    line_of(command)
                );
                let out = Command::new(TL)
                    .args(&words[1..])
                    .env_remove("XDG_DATA_HOME")
                    .env_remove("COMPLETE")
                    .env("TIMELINE_DB", dir.path().join("timeline.db"))
                    .env("TIMELINE_NOW", CLOCK)
                    .env("HOME", dir.path().join("home"))
                    .env("NO_COLOR", "1")
                    .current_dir(dir.path())
                    .stdin(Stdio::null())
                    .output()
                    .unwrap();
                let run = Run::from(out);
                let actual = format!("{}{}", run.stdout, run.stderr);
                commands += 1;
                if actual != expected {
                    failures.push(format!(
                        "{name}:{}: $ {command}\n--- the docs show:\n{expected}--- it printed (exit {}):\n{actual}",
                        line_of(command),
                        run.code
                    ));
                }
            }
        }
    }
    assert!(
        commands >= 10,
        "only {commands} console commands found in README.md and docs/"
    );
    assert!(
        failures.is_empty(),
        "{} of {commands} documented commands print something else:\n\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The counts, versions and tables the docs state are those of the spec and the crate: the number of
/// MCP tools, the version `tl-mcp` reports, the SQLite schema version, the annotations table, limits.
#[test]
fn facts_in_the_docs_match_the_spec() {
    let spec = timeline::spec::spec();
    let tools: Vec<&timeline::spec::Operation> =
        spec.operations.iter().filter(|o| o.mcp.is_some()).collect();
    let version = env!("CARGO_PKG_VERSION");
    let schema = timeline::store::sqlite_schema_version();
    let mut problems = Vec::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec!["README.md".to_string(), "CHANGELOG.md".to_string()];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "md") {
            continue; // the screenshot of the HTML view
        }
        files.push(format!(
            "docs/{}",
            path.file_name().unwrap().to_str().unwrap()
        ));
    }
    // Each pattern is followed by a number (or version) that must be the spec's.
    let facts: [(&str, String); 7] = [
        (" tools", tools.len().to_string()),
        (
            "\"serverInfo\":{\"name\":\"timeline\",\"version\":\"",
            version.to_string(),
        ),
        ("captured from `tl-mcp ", version.to_string()),
        ("`PRAGMA user_version`, now ", schema.to_string()),
        ("the current schema, `format_version` ", schema.to_string()),
        (
            "JSON (`format_version` ",
            spec.constants.format_version.to_string(),
        ),
        (
            "at most **8 MiB (",
            spec.constants.mcp_frame_limit_bytes.to_string(),
        ),
    ];
    for file in &files {
        let text = doc(file);
        for (pattern, wanted) in &facts {
            for (at, _) in text.match_indices(*pattern) {
                let (before, after) = (&text[..at], &text[at + pattern.len()..]);
                // " tools": the number is the word before; the others: the value after.
                let found: String = if *pattern == " tools" {
                    before
                        .chars()
                        .rev()
                        .take_while(char::is_ascii_digit)
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev()
                        .collect()
                } else {
                    after
                        .chars()
                        .take_while(|c| c.is_ascii_digit() || *c == '.')
                        .collect()
                };
                let found = found.trim_end_matches('.');
                if !found.is_empty() && found != wanted {
                    let line = before.lines().count();
                    problems.push(format!(
                        "{file}:{line}: {pattern:?} says {found}, the spec {wanted}"
                    ));
                }
            }
        }
    }
    // docs/mcp.md's annotations table names every tool once, with the spec's three hints.
    let mcp = doc("docs/mcp.md");
    let table = mcp
        .lines()
        .filter(|l| l.starts_with("| `timeline_") && l.matches(" | ").count() == 3)
        .collect::<Vec<_>>();
    let mut listed = Vec::new();
    for row in table {
        let cells: Vec<&str> = row.trim_matches('|').split(" | ").map(str::trim).collect();
        for tool in cells[0].split(", ") {
            let tool = tool.trim_matches('`');
            let Some(op) = tools.iter().find(|o| o.mcp.as_deref() == Some(tool)) else {
                problems.push(format!(
                    "docs/mcp.md: the annotations table names {tool}, which is no tool"
                ));
                continue;
            };
            let Some(a) = &op.annotations else {
                problems.push(format!("{tool} has no annotations in the spec"));
                continue;
            };
            let spec_row = [a.read_only, a.destructive, a.idempotent].map(|b| b.to_string());
            if cells[1..] != spec_row {
                problems.push(format!("docs/mcp.md: {tool} is {:?} in the annotations table, {spec_row:?} in the spec", &cells[1..]));
            }
            listed.push(tool.to_string());
        }
    }
    for op in &tools {
        let tool = op.mcp.as_deref().unwrap();
        if listed.iter().filter(|t| *t == tool).count() != 1 {
            problems.push(format!(
                "docs/mcp.md: the annotations table must name {tool} once"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "the docs disagree with the spec:\n{}",
        problems.join("\n")
    );
}
