//! Freshness of the files under generated/: they are rendered from spec/timeline.json in memory and
//! compared with the checked-in copies. Locally a stale file is rewritten and the test fails once; under
//! CI=true it only fails, naming the command to run. The docs are checked here too: the MCP snippets
//! are run as written.

mod common;

use std::path::Path;

#[test]
fn generated_files_are_fresh() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    let mut stale = Vec::new();
    for (relative, expected) in timeline::spec::emit::render_all() {
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
            "Run `cargo test --test generated` locally and commit the regenerated files."
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
#[cfg(unix)]
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
