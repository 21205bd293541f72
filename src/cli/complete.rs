//! Completion while the user types. The scripts that `tl completions SHELL` prints call `tl` back as
//! `COMPLETE=<shell> tl -- <words of the command line>`, and clap_complete's engine answers from the
//! same clap tree as the parser: commands, flags, the values the spec allows and file names. Node IDs,
//! branch names and timeline IDs come from the database that command line names (`--db`, else
//! `TIMELINE_DB`, else the default), read without changing anything on disk.
//!
//! Cost per key press: SQLite answers from its indexes (one timeline lookup, then one lookup per
//! offered node); a JSON snapshot is parsed once, as every command on it does. Node and timeline IDs
//! are numbered densely, so the IDs that start with what was typed are computed, newest first, instead
//! of listing the messages. At most `MAX_CANDIDATES` are offered.

use crate::model::parse_timeline_id;
use crate::spec::{Names, Param, spec};
use crate::store::{Store, Tx};
use clap_complete::engine::{ArgValueCompleter, CompletionCandidate};
use clap_complete::env::{CompleteEnv, Shells};
use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The environment variable that turns a run of `tl` into a completion request.
pub const VAR: &str = "COMPLETE";

/// The most values offered at once; the newest IDs come first.
const MAX_CANDIDATES: usize = 50;

/// Unicode scalars of a message or title shown beside a candidate (zsh, fish and PowerShell show it).
const HELP_CHARS: usize = 60;

const SHELLS: Shells<'static> = Shells::builtins();

/// The script that registers completion for `shell` (a value of the spec's `shell` type), or `None`
/// for a shell clap_complete does not know. It calls `tl` on the `PATH`.
pub fn registration(shell: &str) -> Option<String> {
    let completer = SHELLS.completer(shell)?;
    let mut out = Vec::new();
    completer
        .write_registration(VAR, "tl", "tl", "tl", &mut out)
        .ok()?;
    let mut script = String::from_utf8(out).ok()?;
    if completer.name() == "zsh" {
        // Installed as `_tl` on the fpath, zsh runs the file as the completion function on the first
        // Tab; clap's script only registers its function there, so that Tab would offer nothing.
        script.push_str(
            "if [[ ${funcstack[1]} == _tl ]]; then\n    _clap_dynamic_completer_tl \"$@\"\nfi\n",
        );
    }
    Some(script)
}

/// Answer a completion request when `COMPLETE` names a shell (as `bash` or a path such as
/// `/bin/bash`); `None` for a normal run, also when `COMPLETE` holds anything else. Nothing is written
/// to standard error: it is the terminal the user is typing in. A failure offers nothing. Returns the
/// exit status.
pub fn from_env() -> Option<u8> {
    let value = std::env::var_os(VAR)?;
    let shell = SHELLS
        .completer(Path::new(&value).file_stem()?.to_str()?)?
        .name();
    std::panic::set_hook(Box::new(|_| {}));
    let args: Vec<OsString> = std::env::args_os().collect();
    let Some(escape) = args.iter().position(|a| a == "--") else {
        // `COMPLETE=bash tl`: the script itself, the same as `tl completions bash`.
        let script = registration(shell)?;
        let mut out = std::io::stdout().lock();
        let written = out.write_all(script.as_bytes()).and_then(|()| out.flush());
        return Some(if written.is_ok() { 0 } else { 1 });
    };
    let context = Arc::new(Context::new(shell, &args[escape + 1..]));
    let current_dir = std::env::current_dir().ok();
    let answered = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        CompleteEnv::with_factory(|| command(&context))
            .bin("tl")
            .completer("tl")
            .try_complete(args.clone(), current_dir.as_deref())
    }));
    Some(match answered {
        Ok(Ok(_)) => 0,
        _ => 1,
    })
}

/// What the database-backed completers need from the command line being completed.
struct Context {
    /// The canonical shell name (`bash`, `zsh`, `fish`, `powershell`, `elvish`).
    shell: &'static str,
    /// The value of `--db` (see `word`).
    db: Option<OsString>,
    /// The value of `--timeline`, without quotes.
    timeline: Option<String>,
}

impl Context {
    /// `words` is the command line as the shell passed it (`tl --db x context --node n1`).
    fn new(shell: &'static str, words: &[OsString]) -> Context {
        let mut context = Context {
            shell,
            db: None,
            timeline: None,
        };
        let mut words = words.iter().skip(1);
        while let Some(word) = words.next() {
            let text = word.to_string_lossy();
            if text == "--" {
                break;
            }
            // `tl` refuses a repeated flag; while the line is being typed the last one is the best
            // guess.
            if text == "--db" {
                context.db = words.next().map(|v| context.word(v));
            } else if let Some(value) = text.strip_prefix("--db=") {
                context.db = Some(context.word(OsStr::new(value)));
            } else if text == "--timeline" {
                context.timeline = words.next().map(|v| context.text(v));
            } else if let Some(value) = text.strip_prefix("--timeline=") {
                context.timeline = Some(context.text(OsStr::new(value)));
            }
        }
        context
    }

    /// Whether the shell passes words as they were typed (quotes and backslashes included). Fish
    /// tokenizes them first and PowerShell parses the command line again before calling `tl`.
    fn raw_words(&self) -> bool {
        !matches!(self.shell, "fish" | "powershell")
    }

    /// A word as the command would receive it: quotes removed where the shell left them in, and a
    /// leading `~/` expanded (the shell has not expanded it yet while the user is typing).
    fn word(&self, word: &OsStr) -> OsString {
        let Some(text) = word.to_str() else {
            return word.to_owned();
        };
        let text = if self.raw_words() {
            unquote(text)
        } else {
            text.to_string()
        };
        let home = std::env::var_os(if cfg!(windows) { "USERPROFILE" } else { "HOME" })
            .filter(|h| !h.is_empty());
        match (text.strip_prefix("~/"), home) {
            (Some(rest), Some(home)) => PathBuf::from(home).join(rest).into_os_string(),
            _ => text.into(),
        }
    }

    /// A word as text, quotes removed where the shell left them in.
    fn text(&self, word: &OsStr) -> String {
        let text = word.to_string_lossy();
        if self.raw_words() {
            unquote(&text)
        } else {
            text.into_owned()
        }
    }

    /// Run `f` on the database the command line names. `None` (nothing offered) when it does not
    /// exist or cannot be read: completion never reports an error, never creates a file or directory,
    /// and never changes the database.
    fn read<R>(&self, f: impl FnOnce(&mut dyn Tx) -> crate::error::Result<R>) -> Option<R> {
        let path = crate::service::db_path_for_reading(self.db.clone()).ok()?;
        // A server database (a URI) is no file; a read of one without Timeline's tables reads
        // as empty and creates nothing.
        let on_server = crate::store::is_uri(&path.to_string_lossy());
        if !on_server && !std::fs::metadata(&path).ok()?.is_file() {
            return None;
        }
        Store::open_reading_only(path).ok()?.read(f).ok()
    }

    /// The timeline the command line uses: `--timeline`, else the one with the smallest ID.
    fn timeline(&self, tx: &mut dyn Tx) -> crate::error::Result<Option<u64>> {
        if let Some(id) = &self.timeline {
            return Ok(parse_timeline_id(id));
        }
        Ok(tx.timeline_ids(1)?.first().copied())
    }

    fn candidates(&self, values: Values, current: &OsStr) -> Vec<CompletionCandidate> {
        let Some(current) = current.to_str() else {
            return Vec::new();
        };
        let current = if self.raw_words() {
            unquote(current)
        } else {
            current.to_string()
        };
        let found = match values {
            Values::Nodes => self.read(|tx| self.nodes(tx, &current)),
            Values::NodeList => {
                // Complete the last ID of a comma-separated list, keeping the ones before it and
                // leaving out the IDs already listed.
                let (done, last) = current
                    .rsplit_once(',')
                    .map_or(("", current.as_str()), |(d, l)| (d, l));
                let listed: Vec<&str> = done.split(',').collect();
                self.read(|tx| self.nodes(tx, last)).map(|nodes| {
                    nodes
                        .into_iter()
                        .filter(|(value, _)| !listed.contains(&value.as_str()))
                        .map(|(value, help)| {
                            let value = if done.is_empty() {
                                value
                            } else {
                                format!("{done},{value}")
                            };
                            (value, help)
                        })
                        .collect()
                })
            }
            Values::Branches => self.read(|tx| self.branches(tx, &current)),
            Values::ArchivedBranches => self.read(|tx| self.archived_branches(tx, &current)),
            Values::Sides => self.read(|tx| {
                let mut both = self.branches(tx, &current)?;
                both.extend(self.nodes(tx, &current)?);
                Ok(both)
            }),
            Values::Timelines => self.read(|tx| self.timelines(tx, &current)),
        };
        found
            .unwrap_or_default()
            .into_iter()
            .map(|(value, help)| {
                CompletionCandidate::new(self.quote(&value)).help(help.map(Into::into))
            })
            .collect()
    }

    /// Node IDs of the timeline that start with `current`, newest first, with role and text.
    fn nodes(&self, tx: &mut dyn Tx, current: &str) -> crate::error::Result<Vec<Offer>> {
        let Some(digits) = id_digits(current, "n") else {
            return Ok(Vec::new());
        };
        let Some(tl) = self.timeline(tx)? else {
            return Ok(Vec::new());
        };
        let Some(row) = tx.timeline(tl)? else {
            return Ok(Vec::new());
        };
        // Messages are n1 .. n(next_node - 1); the root n0 is not a message.
        let mut offers = Vec::new();
        for n in ids_starting_with(digits, 1, row.next_node) {
            let Some(node) = tx.node(tl, n)? else {
                continue;
            };
            let kind = if node.node.is_placeholder() {
                "placeholder"
            } else {
                node.node.role.as_str()
            };
            let archived = if node.node.cold { ", archived" } else { "" };
            offers.push((
                format!("n{n}"),
                Some(format!("{kind}{archived}: {}", excerpt(&node.node.text))),
            ));
        }
        Ok(offers)
    }

    /// Timeline IDs that start with `current`, newest first, with their titles.
    fn timelines(&self, tx: &mut dyn Tx, current: &str) -> crate::error::Result<Vec<Offer>> {
        let Some(digits) = id_digits(current, "tl") else {
            return Ok(Vec::new());
        };
        let mut offers = Vec::new();
        for id in ids_starting_with(digits, 0, tx.next_timeline()?) {
            let Some(row) = tx.timeline(id)? else {
                continue;
            };
            let messages = row.next_node.saturating_sub(1);
            let plural = if messages == 1 { "" } else { "s" };
            let help = match &row.title {
                Some(title) => format!("{} ({messages} message{plural})", excerpt(title)),
                None => format!("{messages} message{plural}"),
            };
            offers.push((format!("tl{id}"), Some(help)));
        }
        Ok(offers)
    }

    /// Branches of the timeline whose names start with `current`, in the order they were created.
    fn branches(&self, tx: &mut dyn Tx, current: &str) -> crate::error::Result<Vec<Offer>> {
        let Some(tl) = self.timeline(tx)? else {
            return Ok(Vec::new());
        };
        let Some(row) = tx.timeline(tl)? else {
            return Ok(Vec::new());
        };
        let offers = tx
            .branches(tl)?
            .into_iter()
            .filter(|b| offerable(&b.name, current))
            .map(|b| {
                let mark = if b.name == row.current_branch {
                    ", current"
                } else {
                    ""
                };
                let help = format!("head n{}{mark}", b.head);
                (b.name, Some(help))
            })
            .collect();
        Ok(capped(offers))
    }

    /// Archived branches (not restored since) whose names start with `current`, newest first.
    fn archived_branches(
        &self,
        tx: &mut dyn Tx,
        current: &str,
    ) -> crate::error::Result<Vec<Offer>> {
        let Some(tl) = self.timeline(tx)? else {
            return Ok(Vec::new());
        };
        let mut seen = std::collections::BTreeSet::new();
        // restore-branch takes the latest archival of a name, so each name is offered once.
        let offers = tx
            .archived_branches(tl)?
            .into_iter()
            .rev()
            .filter(|b| offerable(&b.name, current) && seen.insert(b.name.clone()))
            .map(|b| {
                let help = format!("archived, head n{}", b.head);
                (b.name, Some(help))
            })
            .collect();
        Ok(capped(offers))
    }

    /// A value as the shell must insert it. Bash and PowerShell insert a candidate as it is, so a
    /// name with a space or a special character is quoted; zsh, fish and elvish quote it themselves.
    fn quote(&self, value: &str) -> String {
        let safe = |c: char| c.is_alphanumeric() || "-_.,:+=%^@/".contains(c);
        match self.shell {
            "bash" if !value.chars().all(safe) => format!("'{}'", value.replace('\'', r"'\''")),
            "powershell"
                if !value.chars().all(|c| safe(c) && c != ',' && c != '@') || value.is_empty() =>
            {
                format!("'{}'", value.replace('\'', "''"))
            }
            _ => value.to_string(),
        }
    }
}

/// A value to offer and the help shown beside it.
type Offer = (String, Option<String>);

/// Which values an argument completes from the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Values {
    Nodes,
    NodeList,
    Branches,
    ArchivedBranches,
    /// A branch name or a node ID (diff --left/--right).
    Sides,
    Timelines,
}

/// The database values a parameter completes from its spec type, or `None`.
fn values_of(param: &Param) -> Option<Values> {
    Some(match (param.ty.as_str(), param.names) {
        ("node_id", _) => Values::Nodes,
        ("node_id_list", _) => Values::NodeList,
        ("timeline_id", _) => Values::Timelines,
        ("side", _) => Values::Sides,
        ("branch_name", None) => Values::Branches,
        ("branch_name", Some(Names::Archived)) => Values::ArchivedBranches,
        // A new name: no existing value would be right.
        _ => return None,
    })
}

/// The flags of every command whose values come from the database, as (command words, flag id,
/// values): derived from the spec's parameter types, so a new parameter is completed without more code.
fn database_flags() -> Vec<(Vec<&'static str>, String, Values)> {
    let mut flags = Vec::new();
    for op in &spec().operations {
        for param in &op.params {
            if let Some(values) = values_of(param) {
                let id = if param.positional {
                    param.name.clone()
                } else {
                    param.flag()
                };
                flags.push((op.cli.split(' ').collect(), id, values));
            }
        }
    }
    flags
}

/// The clap tree of `tl` with a completer on every argument whose values come from the database.
fn command(context: &Arc<Context>) -> clap::Command {
    let completer = |values: Values| {
        let context = Arc::clone(context);
        ArgValueCompleter::new(move |current: &OsStr| context.candidates(values, current))
    };
    let mut cmd = super::command();
    // A command's own flags are offered first, then the global ones that every command takes.
    let globals: Vec<String> = cmd
        .get_arguments()
        .filter(|a| a.is_global_set())
        .map(|a| a.get_id().to_string())
        .collect();
    for (i, id) in globals.iter().enumerate() {
        cmd = cmd.mut_arg(id, |a| a.display_order(500 + i));
    }
    // The global --timeline, which every subcommand inherits when the tree is built.
    cmd = cmd.mut_arg("timeline", |a| a.add(completer(Values::Timelines)));
    for (path, id, values) in database_flags() {
        cmd = with_arg(cmd, &path, &id, completer(values));
    }
    cmd
}

fn with_arg(
    cmd: clap::Command,
    path: &[&str],
    id: &str,
    completer: ArgValueCompleter,
) -> clap::Command {
    match path {
        [] => cmd.mut_arg(id, |a| a.add(completer)),
        [first, rest @ ..] => cmd.mut_subcommand(*first, |sub| with_arg(sub, rest, id, completer)),
    }
}

/// The digits typed after an ID's prefix: `n12` → `12`, `n` or nothing → ``. `None` when no ID can
/// start that way (a canonical ID has no leading zero, so `n0` is complete as it is).
fn id_digits<'a>(current: &'a str, prefix: &str) -> Option<&'a str> {
    if current.is_empty() || prefix.starts_with(current) {
        return Some("");
    }
    let digits = current.strip_prefix(prefix)?;
    let canonical = digits.bytes().all(|b| b.is_ascii_digit())
        && !(digits.len() > 1 && digits.starts_with('0'))
        && digits.len() <= 20;
    canonical.then_some(digits)
}

/// The numbers in `first..end` whose decimal form starts with `digits`, largest first, at most
/// `MAX_CANDIDATES`. Computed from the prefix (12 → 12, 120..129, 1200..1299, ...), so the cost
/// does not depend on how many IDs there are.
///
/// When more match than are returned, one smaller match is added whose digits part from the others
/// right after `digits`: shells insert the common beginning of all candidates, and without it they
/// would type digits that the user did not choose (`n` → `n999` with 100000 messages).
fn ids_starting_with(digits: &str, first: u64, end: u64) -> Vec<u64> {
    let mut found = Vec::new();
    let push = |n: u64, found: &mut Vec<u64>| {
        if n >= first && n < end {
            found.push(n);
        }
        found.len() > MAX_CANDIDATES
    };
    if digits.is_empty() {
        for n in (first..end).rev() {
            if push(n, &mut found) {
                break;
            }
        }
    } else if digits == "0" {
        push(0, &mut found);
    } else {
        let Ok(d) = digits.parse::<u64>() else {
            return found;
        };
        // The widest block first: d·10^k .. (d+1)·10^k - 1 for the largest k with d·10^k < end.
        let mut blocks = Vec::new();
        let mut scale = 1u64;
        while let Some(low) = d.checked_mul(scale) {
            if low >= end {
                break;
            }
            let high = (d + 1).saturating_mul(scale).min(end);
            blocks.push((low, high));
            match scale.checked_mul(10) {
                Some(next) => scale = next,
                None => break,
            }
        }
        'blocks: for (low, high) in blocks.into_iter().rev() {
            for n in (low.max(first)..high).rev() {
                if push(n, &mut found) {
                    break 'blocks;
                }
            }
        }
    }
    if found.len() > MAX_CANDIDATES {
        found.truncate(MAX_CANDIDATES);
        let shared = common_prefix(found.iter().map(|n| n.to_string()));
        // The digit the returned IDs share right after the typed ones, if they share one.
        if let Some(next) = shared.chars().nth(digits.len()) {
            let parting = if digits.is_empty() {
                // A one-digit number that starts with another digit.
                (first..10.min(end)).find(|n| !n.to_string().starts_with(next))
            } else {
                // The typed number itself: it is a match, and shorter than the others.
                digits.parse().ok().filter(|n| (first..end).contains(n))
            };
            found.extend(parting);
        }
    }
    found
}

/// At most `MAX_CANDIDATES` offers, plus one when needed so that their common beginning is the same
/// as that of all the offers (see `ids_starting_with`).
fn capped(mut offers: Vec<Offer>) -> Vec<Offer> {
    if offers.len() <= MAX_CANDIDATES {
        return offers;
    }
    let rest = offers.split_off(MAX_CANDIDATES);
    let shared = common_prefix(offers.iter().map(|o| o.0.clone()));
    // The offer left out that parts from the kept ones earliest brings their common beginning down
    // to that of all the offers.
    let parting = rest.into_iter().min_by_key(|o| {
        shared
            .chars()
            .zip(o.0.chars())
            .take_while(|(a, b)| a == b)
            .count()
    });
    if let Some(offer) = parting.filter(|o| !o.0.starts_with(&shared)) {
        offers.push(offer);
    }
    offers
}

fn common_prefix(values: impl Iterator<Item = String>) -> String {
    let mut shared: Option<String> = None;
    for value in values {
        shared = Some(match shared {
            None => value,
            Some(s) => s
                .chars()
                .zip(value.chars())
                .take_while(|(a, b)| a == b)
                .map(|(a, _)| a)
                .collect(),
        });
    }
    shared.unwrap_or_default()
}

/// Whether a branch name can be offered for `current`: it starts with it, and it has no control
/// character (the shells read candidates line by line, or split them at a tab).
fn offerable(name: &str, current: &str) -> bool {
    name.starts_with(current) && !name.chars().any(char::is_control)
}

/// The beginning of a text on one line, for the help beside a candidate.
fn excerpt(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    let line = words.join(" ");
    let mut out: String = line
        .chars()
        .filter(|c| !c.is_control())
        .take(HELP_CHARS)
        .collect();
    if line.chars().count() > HELP_CHARS {
        out.push('…');
    }
    out
}

/// A word as typed, without its quotes and backslash escapes (an unfinished quote is fine: the user
/// is still typing).
fn unquote(word: &str) -> String {
    let mut out = String::new();
    let mut quote: Option<char> = None;
    let mut chars = word.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '\\') | (Some('"'), '\\') => {
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            }
            (_, c) => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_computed_from_the_prefix_newest_first() {
        assert_eq!(ids_starting_with("", 1, 4), [3, 2, 1]);
        assert_eq!(ids_starting_with("1", 1, 13), [12, 11, 10, 1]);
        assert_eq!(ids_starting_with("1", 1, 2), [1]);
        assert_eq!(ids_starting_with("2", 1, 2), Vec::<u64>::new());
        assert_eq!(ids_starting_with("0", 0, 3), [0]);
        assert_eq!(ids_starting_with("0", 1, 3), Vec::<u64>::new());
        assert_eq!(ids_starting_with("", 0, 3), [2, 1, 0]);
        assert_eq!(
            ids_starting_with("18446744073709551615", 1, u64::MAX),
            Vec::<u64>::new()
        );
    }

    #[test]
    fn many_ids_keep_the_typed_beginning_common() {
        let ids = ids_starting_with("", 1, 100_000);
        assert_eq!(ids.len(), MAX_CANDIDATES + 1);
        assert_eq!(ids[0], 99_999);
        assert_eq!(ids[MAX_CANDIDATES - 1], 99_950);
        assert_eq!(ids[MAX_CANDIDATES], 1);
        // Every newest ID starts with 1: the added one starts with another digit.
        let ids = ids_starting_with("", 1, 20_000);
        assert_eq!((ids[0], ids[MAX_CANDIDATES]), (19_999, 2));
        let ids = ids_starting_with("12", 1, 100_000);
        assert_eq!(ids[0], 12_999);
        assert_eq!(ids[MAX_CANDIDATES], 12);
    }

    #[test]
    fn capped_offers_keep_their_common_beginning() {
        let offers: Vec<Offer> = (0..120)
            .map(|i| (format!("import-{}", 1000 + i), None))
            .chain([("import-2".to_string(), None)])
            .collect();
        let kept = capped(offers);
        assert_eq!(kept.len(), MAX_CANDIDATES + 1);
        assert_eq!(kept[MAX_CANDIDATES].0, "import-2");
    }

    #[test]
    fn words_lose_their_quotes() {
        assert_eq!(unquote("'my idea'"), "my idea");
        assert_eq!(unquote("\"my"), "my");
        assert_eq!(unquote(r"my\ idea"), "my idea");
        assert_eq!(unquote(r"'it'\''s'"), "it's");
    }

    #[test]
    fn id_digits_accept_canonical_beginnings_only() {
        assert_eq!(id_digits("", "n"), Some(""));
        assert_eq!(id_digits("n", "n"), Some(""));
        assert_eq!(id_digits("t", "tl"), Some(""));
        assert_eq!(id_digits("n12", "n"), Some("12"));
        assert_eq!(id_digits("n012", "n"), None);
        assert_eq!(id_digits("x", "n"), None);
        assert_eq!(id_digits("n1a", "n"), None);
    }

    #[test]
    fn every_database_flag_exists_in_the_clap_tree() {
        let context = Arc::new(Context::new("bash", &[]));
        let mut cmd = command(&context);
        cmd.build();
        // fork --name and rename-branch --to name new branches: nothing to offer there.
        let flags: Vec<String> = database_flags()
            .iter()
            .map(|(path, id, _)| format!("{} --{id}", path.join(" ")))
            .collect();
        assert!(flags.contains(&"context --node".to_string()), "{flags:?}");
        assert!(flags.contains(&"switch --name".to_string()), "{flags:?}");
        assert!(
            flags.contains(&"restore-branch --branch".to_string()),
            "{flags:?}"
        );
        assert!(!flags.contains(&"fork --name".to_string()), "{flags:?}");
        assert!(
            !flags.contains(&"rename-branch --to".to_string()),
            "{flags:?}"
        );
    }
}
