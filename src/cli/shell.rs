//! Shell integration: completion scripts (clap_complete) and the manual page (clap_mangen and roff).
//! Both walk the clap tree generated from the spec (`generated/cli.rs`), so they name exactly the
//! commands, flags and allowed values that `tl` accepts (completion walks it in `tl` itself, at each
//! Tab). The release archives carry the same texts, checked in under `generated/` by the freshness
//! test.

use crate::spec::spec;
use roff::{Roff, bold, italic, roman};

/// The completion scripts under `generated/completions/`, as (shell, path). The file names are the
/// ones each shell looks for (`_tl` for zsh's fpath, `tl.bash`, …).
pub const COMPLETION_FILES: [(&str, &str); 5] = [
    ("bash", "generated/completions/tl.bash"),
    ("zsh", "generated/completions/_tl"),
    ("fish", "generated/completions/tl.fish"),
    ("powershell", "generated/completions/_tl.ps1"),
    ("elvish", "generated/completions/tl.elv"),
];

/// The completion script of `tl` for `shell` (a value of the spec's `shell` type), or `None` for a
/// shell clap_complete does not know. The script asks `tl` for the candidates at each Tab
/// (`COMPLETE=<shell> tl -- WORDS`, see `complete.rs`), so node IDs and branch names come from the
/// database, and a script written to a file keeps up with the commands of the `tl` it calls.
pub fn completion_script(shell: &str) -> Option<String> {
    super::complete::registration(shell)
}

/// The manual page of `tl` (section 1, roff). clap_mangen renders the title, name, synopsis,
/// description and global options; the COMMANDS section lists every subcommand with its usage line
/// and flags, then come the exit status (from the spec's error table), the environment and the version.
pub fn man_page() -> String {
    let mut cmd = super::command();
    cmd.build();
    let man = clap_mangen::Man::new(cmd.clone()).manual("Timeline manual");
    // Each `render_*` call starts with roff's apostrophe preamble; keep the first one only.
    let preamble = Roff::new().render();
    let mut page = String::new();
    type Section = fn(&clap_mangen::Man, &mut dyn std::io::Write) -> std::io::Result<()>;
    let sections: [Section; 5] = [
        clap_mangen::Man::render_title,
        clap_mangen::Man::render_name_section,
        clap_mangen::Man::render_synopsis_section,
        clap_mangen::Man::render_description_section,
        clap_mangen::Man::render_options_section,
    ];
    for render in sections {
        let mut out = Vec::new();
        // Writing to a Vec cannot fail.
        let _ = render(&man, &mut out);
        let text = String::from_utf8_lossy(&out).into_owned();
        page.push_str(if page.is_empty() {
            &text
        } else {
            text.strip_prefix(&preamble).unwrap_or(&text)
        });
    }
    let rest = commands_and_more(&cmd).render();
    page.push_str(rest.strip_prefix(&preamble).unwrap_or(&rest));
    page
}

fn commands_and_more(cmd: &clap::Command) -> Roff {
    let globals: Vec<&str> = cmd.get_arguments().map(|a| a.get_id().as_str()).collect();
    let mut roff = Roff::new();
    roff.control("SH", ["COMMANDS"]);
    roff.text([roman(
        "Every command takes the global options above. Required flags are shown in each usage line; \
         tl checks them itself and names what is missing.",
    )]);
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let usage = sub.clone().render_usage().to_string();
        let usage = usage.trim().strip_prefix("Usage: ").unwrap_or(usage.trim());
        let name = format!("tl {}", sub.get_name());
        roff.control("TP", []);
        match usage.strip_prefix(&name) {
            Some(rest) => roff.text([bold(name.as_str()), roman(rest)]),
            None => roff.text([roman(usage)]),
        };
        roff.text([roman(
            sub.get_about().map(|a| a.to_string()).unwrap_or_default(),
        )]);
        let args: Vec<&clap::Arg> = sub
            .get_arguments()
            .filter(|a| !globals.contains(&a.get_id().as_str()) && a.get_id() != "help")
            .collect();
        if args.is_empty() {
            continue;
        }
        roff.control("RS", []);
        for arg in args {
            let value = arg
                .get_value_names()
                .and_then(|v| v.first())
                .map(|v| format!("<{v}>"))
                .unwrap_or_default();
            roff.control("TP", []);
            match arg.get_long() {
                // A switch (`--dry-run`) takes no value.
                Some(long) if value.is_empty() => roff.text([bold(format!("--{long}"))]),
                Some(long) => roff.text([bold(format!("--{long}")), roman(" "), italic(value)]),
                None => roff.text([italic(value)]),
            };
            roff.text([roman(
                arg.get_help().map(|h| h.to_string()).unwrap_or_default(),
            )]);
        }
        roff.control("RE", []);
    }

    roff.control("SH", ["EXIT STATUS"]);
    roff.text([roman(
        "0 on success, with one line of JSON on standard output (text for completions, man, demo, \
         an ASCII export and --help). Otherwise one line {\"error\": ...} on standard error and:",
    )]);
    let mut codes: Vec<(i32, &str)> = spec()
        .errors
        .iter()
        .map(|(kind, e)| (e.exit_code, kind.as_str()))
        .collect();
    codes.sort();
    let mut by_code: Vec<(i32, Vec<&str>)> = Vec::new();
    for (code, kind) in codes {
        match by_code.last_mut() {
            Some((last, kinds)) if *last == code => kinds.push(kind),
            _ => by_code.push((code, vec![kind])),
        }
    }
    for (code, kinds) in by_code {
        roff.control("TP", []);
        roff.text([bold(code.to_string())]);
        roff.text([roman(kinds.join(", "))]);
    }

    roff.control("SH", ["ENVIRONMENT"]);
    roff.control("TP", []);
    roff.text([bold("TIMELINE_DB")]);
    roff.text([roman(
        "The database file when --db is not given. Without either, tl uses .timeline.json in your \
         home directory.",
    )]);
    roff.control("TP", []);
    roff.text([bold("COMPLETE")]);
    roff.text([roman(
        "Set by the scripts of tl completions to the name of a shell (bash, zsh, fish, powershell or \
         elvish): tl then prints the completion candidates for the words after -- instead of running \
         a command, reading node IDs and branch names from the database without changing it. Any \
         other value is ignored.",
    )]);

    roff.control("SH", ["SEE ALSO"]);
    roff.text([
        bold("tl-mcp"),
        roman(
            " --help (the MCP server over the same database); the command reference \
               generated/cli-reference.md and the README of the Timeline repository.",
        ),
    ]);

    roff.control("SH", ["VERSION"]);
    roff.text([roman(format!("v{}", env!("CARGO_PKG_VERSION")))]);
    roff
}
