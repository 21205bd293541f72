//! The `tl` front-end: raw arguments → the same JSON object an MCP client sends → the service → stdout.

use crate::error::{Error, ErrorKind};
use crate::service::{self, Output, Request};
use crate::spec::Origin;
use crate::spec::{Operation, TimelineUse, TypeKind, spec};
use crate::terminal;
use clap::ArgMatches;
use serde_json::{Map, Value};
use std::ffi::OsString;
use std::io::{Read, Write};

/// What a bug that stops `tl` asks of the user, as a literal (for `concat!`).
macro_rules! bug_advice {
    () => {
        concat!(
            "this is a bug in Timeline: please report it, with the command you ran, at ",
            env!("CARGO_PKG_REPOSITORY"),
            "/issues. A change it was making was kept whole or not at all: tl log shows what is stored"
        )
    };
}

mod complete;
mod demo;
pub mod shell;
#[cfg(target_os = "linux")]
pub mod start;
mod text;
pub use text::View;

include!("../../generated/cli.rs");

/// A value parser that accepts any string and offers the spec's allowed values to shell completion
/// (clap_complete reads them from here). Checking stays with the spec validator, so a wrong value gets
/// the same error on the command line as over MCP.
#[derive(Clone)]
struct SpecValues(&'static [&'static str]);

fn spec_values(values: &'static [&'static str]) -> SpecValues {
    SpecValues(values)
}

impl clap::builder::TypedValueParser for SpecValues {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            self.0.iter().map(|v| clap::builder::PossibleValue::new(*v)),
        ))
    }
}

/// Everything that ends a `tl` run other than success.
#[derive(Debug)]
pub enum CliError {
    /// Help or version text the user asked for (stdout, exit 0), or help shown for a bare `tl` (exit 2).
    Text {
        /// The text to print.
        text: String,
        /// The exit status.
        exit_code: u8,
    },
    /// A library error: JSON on stderr, exit code by kind.
    Failed(Error),
}

impl From<Error> for CliError {
    fn from(e: Error) -> Self {
        CliError::Failed(e)
    }
}

/// The `tl` program: parse the command line, run the request, print the result; returns the exit
/// status. A panic (a bug) is caught here and reported like any internal error (exit 70): it must
/// not unwind out of `tl`'s C `main`, where it would abort the process without a word.
pub fn main() -> u8 {
    std::panic::set_hook(Box::new(|info| {
        if let Ok(mut last) = PANIC.lock() {
            *last = Some(info.to_string().replace('\n', " "));
        }
    }));
    match std::panic::catch_unwind(run_main) {
        Ok(code) => code,
        Err(_) => {
            let what = PANIC.lock().ok().and_then(|mut p| p.take());
            let error = Error::internal(format!(
                "internal error: tl stopped at a bug ({}); {BUG_ADVICE}",
                what.as_deref().unwrap_or("a panic")
            ));
            let _ = writeln!(
                std::io::stderr().lock(),
                "{}",
                terminal::escape_json(&error.to_json().to_string())
            );
            u8::try_from(error.kind.exit_code()).unwrap_or(70)
        }
    }
}

/// What a bug that stops `tl` asks of the user (also in `start`'s stack-overflow report).
const BUG_ADVICE: &str = bug_advice!();

/// The last panic's message and place, for `main`'s report.
static PANIC: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

fn run_main() -> u8 {
    // A shell asking for completions (COMPLETE=<shell>): answered before anything is parsed or read.
    if let Some(code) = complete::from_env() {
        return code;
    }
    #[cfg(debug_assertions)]
    crash_for_tests();
    let mut ran = None;
    // (An export streamed to standard output reports its own write errors.)
    let result = run_op(
        std::env::args_os(),
        &mut std::io::stdin().lock(),
        &mut std::io::stdout().lock(),
        View::stdout(),
        &mut ran,
    );
    let (code, written) = match result {
        Ok(None) => (0, Ok(())),
        Ok(Some(Output::Json(value))) => (
            0,
            write_stdout(&format!("{}\n", terminal::escape_json(&value.to_string()))),
        ),
        Ok(Some(Output::Text(text))) => (0, write_stdout(&text)),
        Err(CliError::Text { text, exit_code }) => (exit_code, write_stdout(&text)),
        Err(CliError::Failed(error)) => {
            let _ = writeln!(
                std::io::stderr().lock(),
                "{}",
                terminal::escape_json(&error.to_json().to_string())
            );
            return u8::try_from(error.kind.exit_code()).unwrap_or(1);
        }
    };
    match written {
        Ok(()) => code,
        Err(e) => {
            let changed = ran.filter(|op| op.mutating).map(|op| op.cli.as_str());
            let error = unwritten_output(&e, changed);
            let _ = writeln!(
                std::io::stderr().lock(),
                "{}",
                terminal::escape_json(&error.to_json().to_string())
            );
            u8::try_from(error.kind.exit_code()).unwrap_or(1)
        }
    }
}

/// The error of a result that could not be written to standard output (a full disk, a device
/// error): the change, if any, was made, so the message says so and how to see it; a read says
/// why its output is missing. A closed pipe never gets here (the reader's choice).
fn unwritten_output(e: &std::io::Error, changed: Option<&str>) -> Error {
    let message = match changed {
        Some(cli) => format!(
            "tl {cli} made its change, but its result could not be written to standard output ({e}). The change is stored: see it with tl log (or tl branches, tl timelines); running the command again would make it again"
        ),
        None => format!(
            "the output could not be written to standard output ({e}); nothing was changed. Write it somewhere with room (for example another file or a pipe) and run the command again"
        ),
    };
    Error::new(ErrorKind::Output, message).with_source(std::io::Error::new(e.kind(), e.to_string()))
}

/// A test-only way to stop `tl` at a bug (debug builds only): `TIMELINE_TEST_CRASH=panic` panics,
/// `TIMELINE_TEST_CRASH=stack-overflow` recurses without end.
#[cfg(debug_assertions)]
fn crash_for_tests() {
    #[inline(never)]
    fn recurse(depth: u64) -> u64 {
        let frame = std::hint::black_box([depth as u8; 4096]);
        if depth == u64::MAX {
            return 0;
        }
        recurse(depth + 1) + u64::from(frame[0])
    }
    match std::env::var("TIMELINE_TEST_CRASH").as_deref() {
        Ok("panic") => panic!("the test-only panic of TIMELINE_TEST_CRASH=panic"),
        Ok("stack-overflow") => {
            std::hint::black_box(recurse(0));
        }
        _ => {}
    }
}

/// Standard output for the demo's transcript, which goes on past a failed write: passes writes on
/// and keeps the first error other than a closed pipe (the reader's choice) for `into_result`.
struct Checked<W: Write> {
    inner: W,
    failed: Option<std::io::Error>,
}

impl<W: Write> Checked<W> {
    fn new(inner: W) -> Self {
        Checked {
            inner,
            failed: None,
        }
    }

    fn keep(&mut self, e: std::io::Error) -> std::io::Error {
        if e.kind() != std::io::ErrorKind::BrokenPipe && self.failed.is_none() {
            self.failed = Some(std::io::Error::new(e.kind(), e.to_string()));
        }
        e
    }

    fn into_result(mut self) -> std::io::Result<()> {
        let flushed = self.inner.flush();
        match (self.failed.take(), flushed) {
            (Some(e), _) => Err(e),
            (None, Err(e)) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e),
            _ => Ok(()),
        }
    }
}

impl<W: Write> Write for Checked<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.inner.write(buf).map_err(|e| self.keep(e))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush().map_err(|e| self.keep(e))
    }
}

/// The command `args` run when they name one of the spec's plainly, after global flags and their
/// values (`tl --db x.db append ...`): the tree parsed then holds only it. Anything else (help, a
/// version, a flag `tl` does not take before the command, a misspelt command, which clap suggests
/// a fix for) is parsed with the whole tree.
fn command_named(args: &[OsString]) -> Option<&str> {
    let spec = spec();
    let takes_value = |flag: &str| spec.globals.iter().any(|g| g.cli_flag == flag);
    let mut rest = args.iter().skip(1);
    while let Some(arg) = rest.next() {
        let arg = arg.to_str()?;
        match arg.strip_prefix("--") {
            Some(flag) if takes_value(flag) => {
                rest.next()?;
            }
            Some(flag) if flag.split_once('=').is_some_and(|(f, _)| takes_value(f)) => {}
            Some(_) => return None,
            None if arg.starts_with('-') => return None,
            None => {
                let known = spec
                    .operations
                    .iter()
                    .any(|op| op.cli.split(' ').next() == Some(arg));
                return known.then_some(arg);
            }
        }
    }
    None
}

/// Print to stdout; a closed pipe (`tl ... | head`) is the reader's choice, not an error, and any
/// other failure (a full disk, `tl ... > /dev/full`) is returned.
fn write_stdout(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e),
        _ => Ok(()),
    }
}

/// Parse `args`, build the request and run it; the whole output comes back, also an ASCII tree.
/// `stdin` feeds `--text -` and `--summary -`.
pub fn run(
    args: impl IntoIterator<Item = OsString>,
    stdin: &mut dyn Read,
) -> Result<Output, CliError> {
    let mut text = Vec::new();
    Ok(match run_to(args, stdin, &mut text)? {
        Some(output) => output,
        None => Output::Text(String::from_utf8(text).expect("the tree is UTF-8")),
    })
}

/// Like [`run`], but an ASCII export without `--output` is written to `stdout` while it is drawn
/// (and `None` comes back), so a large tree is never held in memory.
pub fn run_to(
    args: impl IntoIterator<Item = OsString>,
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
) -> Result<Option<Output>, CliError> {
    run_with(args, stdin, stdout, View::plain())
}

/// Like [`run_to`], with `--format text` rendered for `view` (its width and whether it may colour).
pub fn run_with(
    args: impl IntoIterator<Item = OsString>,
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
    view: View,
) -> Result<Option<Output>, CliError> {
    run_op(args, stdin, stdout, view, &mut None)
}

/// [`run_with`], noting in `ran` the operation the arguments name once they are parsed.
fn run_op(
    args: impl IntoIterator<Item = OsString>,
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
    view: View,
    ran: &mut Option<&'static Operation>,
) -> Result<Option<Output>, CliError> {
    let args: Vec<OsString> = args.into_iter().collect();
    // The program is `tl` in usage lines whatever its file is called (`tl.exe` on Windows).
    let matches = command_to_parse(command_named(&args))
        .bin_name("tl")
        .try_get_matches_from(&args)
        .map_err(|e| clap_error(e, &args))?;
    let before = matches
        .try_get_one::<String>("format")
        .ok()
        .flatten()
        .cloned();
    let (group, mut sub) = matches
        .subcommand()
        .ok_or_else(|| Error::invalid("a command is required; run tl --help"))?;
    // `tl db info` and its siblings: the spec names them "db info", a command group and a command.
    let mut name = group.to_string();
    if let Some((inner, inner_matches)) = sub.subcommand() {
        name = format!("{group} {inner}");
        sub = inner_matches;
    }
    let op = spec()
        .by_cli(&name)
        .ok_or_else(|| Error::invalid(format!("unknown command {name}")))?;
    *ran = Some(op);
    let text = text_format(op, before, sub)?;
    output_format_after_command(op, sub)?;
    // Local commands (completions, man, demo) read no database unless --db is given to the demo.
    let db = if op.local() {
        None
    } else {
        let path = service::db_path_for_reading(sub.get_one::<OsString>("db").cloned())?;
        if op.mutating {
            service::before_change(&path)?;
        }
        Some(path)
    };
    let key = utf8_global(sub, "idempotency-key")?;
    let mut args = Map::new();
    if let Some(timeline) = utf8_global(sub, "timeline")? {
        if op.timeline == TimelineUse::None {
            return Err(Error::invalid(format!(
                "invalid argument --timeline: {} does not use a timeline",
                op.cli
            ))
            .into());
        }
        args.insert("timeline_id".into(), Value::String(timeline));
    }
    collect_params(op, sub, stdin, &mut args)?;
    let mut store = match db {
        Some(db) => Some(crate::store::Store::open(db)?),
        None if key.is_some() => {
            return Err(Error::invalid(format!(
                "invalid argument --idempotency-key: {} does not take an idempotency key; it changes nothing in your databases, so it is always safe to run again",
                op.cli
            ))
            .into());
        }
        None => None,
    };
    let checked = service::check(Request {
        op,
        args,
        idempotency_key: key,
        origin: Origin::Cli,
    })?;
    // Only local commands have no store (`db` above); a missing one is a bug.
    let no_store = || Error::internal(format!("internal error: {} has no database", op.cli));
    match checked.request {
        crate::ops::Request::Local(local) => run_local(local, sub).map(Some),
        // The same checks as service::execute (an idempotency key is refused), then the streaming export.
        crate::ops::Request::Export(export) => {
            let store = store.as_mut().ok_or_else(no_store)?;
            Ok(crate::export::execute(store, &export, stdout)?.map(Output::Json))
        }
        crate::ops::Request::Tx(ref request) => {
            let render = text.then(|| text::renderer(request)).flatten();
            let store = store.as_mut().ok_or_else(no_store)?;
            Ok(Some(shown(service::run(store, checked)?, render, &view)))
        }
        crate::ops::Request::Database(ref request) => {
            let render = text.then(|| text::database_renderer(request)).flatten();
            let store = store.as_mut().ok_or_else(no_store)?;
            Ok(Some(shown(service::run(store, checked)?, render, &view)))
        }
    }
}

/// A result as its text view draws it, when there is one (`--format text`), else as it is.
fn shown(output: Output, render: Option<text::Renderer>, view: &View) -> Output {
    match (output, render) {
        (Output::Json(value), Some(render)) => {
            let mut shown = String::new();
            render(&value, view, &mut shown);
            Output::Text(shown)
        }
        (other, _) => other,
    }
}

/// Whether `--format text` was asked for (before or after the command); refused for commands
/// without a text view and for values other than json and text.
fn text_format(op: &Operation, before: Option<String>, sub: &ArgMatches) -> Result<bool, Error> {
    let Some(global) = spec().globals.iter().find(|g| g.name == "format") else {
        return Ok(false);
    };
    let after = if global.after_command(op) {
        sub.try_get_one::<String>(&global.cli_flag)
            .ok()
            .flatten()
            .cloned()
    } else {
        None
    };
    let Some(value) = after.or(before) else {
        return Ok(false);
    };
    if !global.applies_to(&op.name) {
        let takes: Vec<&str> = global
            .operations
            .iter()
            .flatten()
            .filter_map(|name| spec().operation(name).map(|o| o.cli.as_str()))
            .collect();
        return Err(Error::invalid(format!(
            "invalid argument --{}: {} has no text view; --{} {value} is for {}",
            global.cli_flag,
            op.cli,
            global.cli_flag,
            takes.join(", ")
        )));
    }
    match value.as_str() {
        "json" => Ok(false),
        "text" => Ok(true),
        other => Err(Error::invalid(format!(
            "invalid argument --{}: must be one of {}, got {:?}",
            global.cli_flag,
            global.values.join(", "),
            crate::spec::validate::shorten(other)
        ))),
    }
}

/// `tl import --format text`: the value of the output option given after a command whose own
/// `--format` means something else (what an import file holds): refused with the way to ask for the
/// text view, not only the list of the command's own values.
fn output_format_after_command(op: &Operation, sub: &ArgMatches) -> Result<(), Error> {
    let Some(global) = spec().globals.iter().find(|g| g.name == "format") else {
        return Ok(());
    };
    let Some(own) = op.params.iter().find(|p| p.flag() == global.cli_flag) else {
        return Ok(());
    };
    if !global.applies_to(&op.name) {
        return Ok(());
    }
    let Some(value) = sub.try_get_one::<String>(&global.cli_flag).ok().flatten() else {
        return Ok(());
    };
    let own_values = spec()
        .types
        .get(&own.ty)
        .map(|t| t.allowed.as_slice())
        .unwrap_or_default();
    if !global.values.iter().any(|v| v == value) || own_values.iter().any(|v| v == value) {
        return Ok(());
    }
    Err(Error::invalid(format!(
        "invalid argument --{flag}: after the command, --{flag} is {cmd}'s own option and must be one of {}, got {value:?}; to print {cmd}'s result as {value}, put --{flag} before the command: tl --{flag} {value} {cmd} ...",
        own_values.join(", "),
        flag = global.cli_flag,
        cmd = op.cli,
    )))
}

/// The commands that run in `tl` itself (`local` in the spec): no store, no service.
fn run_local(request: crate::ops::LocalRequest, matches: &ArgMatches) -> Result<Output, CliError> {
    match request {
        crate::ops::LocalRequest::Completions(completions) => {
            let shell = completions.shell;
            let script = shell::completion_script(&shell).ok_or_else(|| {
                Error::invalid(format!("invalid argument <SHELL>: unknown shell {shell}"))
            })?;
            Ok(Output::Text(script))
        }
        crate::ops::LocalRequest::Man(_) => Ok(Output::Text(shell::man_page())),
        crate::ops::LocalRequest::Demo(_) => {
            // Only an explicit --db: the demo never writes to the database TIMELINE_DB names.
            let db = match matches.get_one::<OsString>("db") {
                Some(path) => Some(service::resolve_db_path(Some(path.clone()))?),
                None => None,
            };
            let mut out = Checked::new(std::io::stdout().lock());
            demo::run_demo(db, &mut out)?;
            out.into_result().map_err(|e| {
                Error::new(
                    ErrorKind::Output,
                    format!(
                        "tl demo could not write its transcript to standard output ({e}); run it again with its output going somewhere with room"
                    ),
                )
            })?;
            Ok(Output::Text(String::new()))
        }
    }
}

fn utf8_global(matches: &ArgMatches, flag: &str) -> Result<Option<String>, Error> {
    match matches.get_one::<OsString>(flag) {
        None => Ok(None),
        Some(value) => value.to_str().map(|s| Some(s.to_string())).ok_or_else(|| {
            Error::invalid(format!("invalid argument --{flag}: must be valid UTF-8"))
        }),
    }
}

/// Turn the subcommand's flags into the JSON object of MCP argument names.
fn collect_params(
    op: &Operation,
    m: &ArgMatches,
    stdin: &mut dyn Read,
    args: &mut Map<String, Value>,
) -> Result<(), Error> {
    let spec = spec();
    for param in &op.params {
        let def = spec.type_def(&param.ty);
        let flag = param.flag();
        if def.kind == TypeKind::Bool {
            if m.try_get_one::<bool>(&flag).ok().flatten() == Some(&true) {
                args.insert(param.name.clone(), Value::Bool(true));
            }
            continue;
        }
        if def.kind == TypeKind::Object {
            let mut object = Map::new();
            for field in &def.fields {
                if let Some(v) = m.get_one::<String>(&field.cli_flag) {
                    object.insert(field.name.clone(), Value::String(v.clone()));
                }
            }
            if !object.is_empty() {
                args.insert(param.name.clone(), Value::Object(object));
            }
            continue;
        }
        if def.kind == TypeKind::Bool {
            // A switch: given means true, absent means off (and is left out, like over MCP).
            if m.get_flag(&flag) {
                args.insert(param.name.clone(), Value::Bool(true));
            }
            continue;
        }
        let inline = m.get_one::<String>(&flag).cloned();
        let from_file = param
            .file_flag
            .as_ref()
            .and_then(|f| m.get_one::<String>(f).map(|p| (f.clone(), p.clone())));
        let raw = match (inline, from_file) {
            (Some(_), Some((file_flag, _))) => {
                return Err(Error::invalid(format!(
                    "invalid argument --{flag}: give either --{flag} or --{file_flag}, not both"
                )));
            }
            (Some(v), None) if param.stdin && v == "-" => Some(read_limited(
                stdin,
                &format!("--{flag} - (standard input)"),
            )?),
            (Some(v), None) => Some(v),
            (None, Some((file_flag, path))) => {
                let mut file = std::fs::File::open(&path).map_err(|e| {
                    Error::invalid(format!(
                        "invalid argument --{file_flag}: cannot open {path}: {e}"
                    ))
                })?;
                Some(read_limited(&mut file, &format!("--{file_flag} {path}"))?)
            }
            (None, None) => None,
        };
        let Some(raw) = raw else { continue };
        let value = match def.kind {
            TypeKind::Uint if !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit()) => {
                // Parsed as JSON so that an out-of-range number meets the same check as over MCP;
                // leading zeros (007) are fine on a command line but not in JSON, so drop them first.
                let digits = raw.trim_start_matches('0');
                let digits = if digits.is_empty() { "0" } else { digits };
                serde_json::from_str(digits).unwrap_or(Value::String(raw))
            }
            TypeKind::List => Value::Array(
                raw.split(',')
                    .map(|s| Value::String(s.trim().to_string()))
                    .collect(),
            ),
            _ => Value::String(raw),
        };
        args.insert(param.name.clone(), value);
    }
    Ok(())
}

/// Read UTF-8 text up to the text limit, with errors that name where it came from, without its final
/// newline.
fn read_limited(source: &mut dyn Read, what: &str) -> Result<String, Error> {
    let limit = spec().constants.max_text_bytes;
    let mut bytes = Vec::new();
    // Two bytes more than the limit: a final CRLF does not count.
    source
        .take(limit as u64 + 3)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::invalid(format!("invalid argument {what}: cannot read it: {e}")))?;
    // `echo x | tl append --text -` and a file saved by an editor end with a newline that is not
    // part of the message: one final newline (LF or CRLF) is dropped, as a shell's $(...) would.
    if bytes.ends_with(b"\n") {
        bytes.pop();
        if bytes.ends_with(b"\r") {
            bytes.pop();
        }
    }
    if bytes.len() > limit {
        return Err(Error::invalid(format!(
            "invalid argument {what}: more than {limit} bytes; the limit for one text is 1 MiB"
        )));
    }
    String::from_utf8(bytes)
        .map_err(|_| Error::invalid(format!("invalid argument {what}: not valid UTF-8")))
}

fn clap_error(e: clap::Error, args: &[OsString]) -> CliError {
    use clap::error::ErrorKind as K;
    match e.kind() {
        K::DisplayHelp | K::DisplayVersion => CliError::Text {
            text: e.render().to_string(),
            exit_code: 0,
        },
        K::DisplayHelpOnMissingArgumentOrSubcommand => CliError::Text {
            text: e.render().to_string(),
            exit_code: 2,
        },
        _ => {
            let rendered = e.render().to_string();
            let lines: Vec<&str> = rendered
                .lines()
                .map(str::trim)
                .filter(|l| {
                    !l.is_empty()
                        && !l.starts_with("Usage:")
                        && !l.starts_with("For more information")
                })
                .map(|l| l.strip_prefix("error: ").unwrap_or(l))
                .collect();
            let advice = match e.kind() {
                K::UnknownArgument => flag_for_positional(args),
                _ => None,
            }
            .unwrap_or_else(|| "run tl --help for usage".to_string());
            // clap repeats what was typed: a URI among it is shown without its password.
            let typed: Vec<String> = args
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            let message = format!("invalid arguments: {}; {advice}", lines.join(" "));
            CliError::Failed(Error::new(
                ErrorKind::InvalidArgument,
                crate::store::hide_uris(&message, typed.iter().map(String::as_str)),
            ))
        }
    }
}

/// For `tl pin n3` or `tl search hotel kyoto`: words typed without a flag after a command are the
/// value of its one required flag (or of its node flag, for a word like `n3`); the advice is the
/// command line with that flag.
fn flag_for_positional(args: &[OsString]) -> Option<String> {
    let args: Vec<&str> = args
        .iter()
        .skip(1)
        .map(|a| a.to_str())
        .collect::<Option<_>>()?;
    let (at, op) = args
        .iter()
        .enumerate()
        .find_map(|(i, a)| spec().by_cli(a).map(|op| (i, op)))?;
    // Words that are neither a flag nor the value of the flag before them; the rest is kept.
    let (mut words, mut rest) = (Vec::new(), Vec::new());
    let mut previous_is_flag = false;
    for arg in &args[at + 1..] {
        let is_flag = arg.starts_with('-') && *arg != "-";
        if !is_flag && !previous_is_flag {
            words.push(*arg);
        } else {
            rest.push(*arg);
        }
        previous_is_flag = is_flag && !arg.contains('=');
    }
    let given = |flag: &str| {
        rest.iter()
            .any(|a| *a == flag || a.starts_with(&format!("{flag}=")))
    };
    let required: Vec<_> = op
        .params
        .iter()
        .filter(|p| p.required && !p.positional)
        .collect();
    // Once every required flag is given, a lone word is the file of the command's one path
    // parameter (`tl import --format chatgpt conversations.json`).
    let paths: Vec<_> = op
        .params
        .iter()
        .filter(|p| p.ty == "path" && !p.positional && !given(&format!("--{}", p.flag())))
        .collect();
    let looks_like_node = words.len() == 1
        && words[0].len() > 1
        && words[0].starts_with('n')
        && words[0][1..].bytes().all(|b| b.is_ascii_digit());
    let all_required_given = required.iter().all(|p| given(&format!("--{}", p.flag())));
    let param = match (required.as_slice(), paths.as_slice()) {
        (_, [path]) if all_required_given && words.len() == 1 => *path,
        ([one], _) => *one,
        _ if looks_like_node => *required.iter().find(|p| p.ty == "node_id")?,
        _ => return None,
    };
    let flag = format!("--{}", param.flag());
    if words.is_empty() || given(&flag) {
        return None;
    }
    let value = words.join(" ");
    let value = if value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_.:/,-".contains(c))
    {
        value
    } else {
        format!("'{}'", value.replace('\'', "'\\''"))
    };
    let mut line = vec!["tl", op.cli.as_str()];
    line.extend(rest);
    line.extend([flag.as_str(), value.as_str()]);
    Some(format!("give it with its flag: {}", line.join(" ")))
}
