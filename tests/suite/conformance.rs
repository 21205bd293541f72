//! The conformance suite: every named scenario of `conformance/cases/*.json` runs twice, once through
//! `tl` and once through `tl-mcp`, each on a fresh database, and both must produce the expected outcome.
//!
//! Cases are written with MCP argument names; the CLI half translates them into flags from the spec
//! (`timeline::spec::spec()`), so a renamed flag changes the translation, not the cases. The format is
//! described in `conformance/README.md`. `conformance/index.json` maps requirement IDs to cases, and the
//! tests at the end prove it complete.

use crate::common;

use common::{TL, TL_MCP, TempDir};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use timeline::spec::{Operation, TypeKind, spec};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FrontEnd {
    Cli,
    Mcp,
}

impl FrontEnd {
    fn name(self) -> &'static str {
        match self {
            FrontEnd::Cli => "cli",
            FrontEnd::Mcp => "mcp",
        }
    }
}

struct Case {
    name: String,
    value: Value,
}

impl Case {
    fn front_ends(&self) -> Vec<String> {
        match self.value.get("front_ends") {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            _ => vec!["cli".into(), "mcp".into()],
        }
    }

    fn runs_on(&self, fe: FrontEnd) -> bool {
        self.front_ends().iter().any(|f| f == fe.name())
    }

    fn steps(&self) -> &[Value] {
        self.value["steps"].as_array().map_or(&[], Vec::as_slice)
    }

    fn requirements(&self) -> Vec<String> {
        self.value["requirements"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn load_cases() -> Vec<Case> {
    let dir = root().join("conformance/cases");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let value: Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            assert_eq!(
                value["name"].as_str(),
                Some(name.as_str()),
                "{}: \"name\" must equal the file name",
                path.display()
            );
            Case { name, value }
        })
        .collect()
}

/// Replace `{{dir}}`, `{{sep}}` (the path separator) and `{{crate_version}}` inside strings, a whole
/// string `{{format_version}}` by the number `db info` reports for the engine, and a whole string
/// `{{file:PATH}}` by the JSON content of that repository file.
fn substitute(value: &Value, dir: &Path, engine: Engine) -> Value {
    match value {
        // The format version `db info` reports: the JSON snapshot's, or the SQLite schema's.
        Value::String(s) if s == "{{format_version}}" => match engine {
            Engine::Json => json!(spec().constants.format_version),
            Engine::Sqlite => json!(timeline::store::sqlite_schema_version()),
            Engine::Postgres => json!(timeline::store::postgres_schema_version()),
        },
        Value::String(s) => {
            if let Some(path) = s
                .strip_prefix("{{file:")
                .and_then(|rest| rest.strip_suffix("}}"))
            {
                let text = std::fs::read_to_string(root().join(path))
                    .unwrap_or_else(|e| panic!("{{{{file:{path}}}}}: {e}"));
                return serde_json::from_str(&text).unwrap();
            }
            Value::String(
                s.replace("{{dir}}", &dir.display().to_string())
                    .replace("{{db_file}}", engine.file_name())
                    .replace("{{engine}}", engine.name())
                    .replace("{{sep}}", std::path::MAIN_SEPARATOR_STR)
                    .replace("{{crate_version}}", env!("CARGO_PKG_VERSION")),
            )
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| substitute(v, dir, engine)).collect())
        }
        // A whole string `{{sqlite_log}}` or `{{sqlite_version}}`: what `db info` reports of a
        // SQLite database in the tests' processes; the key is left out on the other engines.
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| engine == Engine::Sqlite || !is_sqlite_field(v))
                .map(|(k, v)| match v.as_str() {
                    Some("{{sqlite_log}}") => (k.clone(), json!(common::SQLITE_LOG)),
                    Some("{{sqlite_version}}") => {
                        (k.clone(), json!(timeline::store::sqlite_version()))
                    }
                    _ => (k.clone(), substitute(v, dir, engine)),
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

fn is_sqlite_field(value: &Value) -> bool {
    matches!(
        value.as_str(),
        Some("{{sqlite_log}}" | "{{sqlite_version}}")
    )
}

/// `expected` is contained in `actual`: objects may have extra keys, arrays match element by element.
fn subset(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => e
            .iter()
            .all(|(k, v)| a.get(k).is_some_and(|av| subset(v, av))),
        (Value::Array(e), Value::Array(a)) => {
            e.len() == a.len() && e.iter().zip(a).all(|(x, y)| subset(x, y))
        }
        _ => expected == actual,
    }
}

/// What one step produced, normalised across front-ends.
#[derive(Debug)]
enum Outcome {
    Ok(Value),
    Err {
        /// CLI exit code or JSON-RPC error code; `None` for an MCP tool error (`isError: true`).
        code: Option<i64>,
        message: String,
        data: Option<Value>,
    },
}

/// The expected error message for a front-end: a string for both, or `{"cli": ..., "mcp": ...}`
/// where the message names a next step (a command for `tl`, a tool and arguments over MCP).
fn expected_message(expected: &Value, fe: FrontEnd) -> Option<&Value> {
    match expected {
        Value::Object(by_front_end) => by_front_end.get(fe.name()),
        other => Some(other),
    }
}

/// The tools of `generated/tools.json` by name, with their schemas compiled (JSON Schema 2020-12).
fn tool_schemas() -> &'static BTreeMap<String, (jsonschema::Validator, jsonschema::Validator)> {
    static SCHEMAS: std::sync::OnceLock<
        BTreeMap<String, (jsonschema::Validator, jsonschema::Validator)>,
    > = std::sync::OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let text = std::fs::read_to_string(root().join("generated/tools.json")).unwrap();
        let tools: Value = serde_json::from_str(&text).unwrap();
        tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| {
                let compile = |schema: &Value| {
                    jsonschema::draft202012::new(schema)
                        .unwrap_or_else(|e| panic!("{}: {e}", tool["name"]))
                };
                (
                    tool["name"].as_str().unwrap().to_string(),
                    (
                        compile(&tool["inputSchema"]),
                        compile(&tool["outputSchema"]),
                    ),
                )
            })
            .collect()
    })
}

/// Structured content must validate against the tool's `outputSchema`.
fn check_structured(tool: &str, structured: &Value) -> Result<(), String> {
    let (_, output) = tool_schemas()
        .get(tool)
        .ok_or_else(|| format!("{tool} is not in generated/tools.json"))?;
    let problems: Vec<String> = output
        .iter_errors(structured)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "structuredContent of {tool} does not match its outputSchema: {}: {structured}",
            problems.join("; ")
        ))
    }
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The `tl` argument list for an operation given MCP arguments, derived from the spec.
fn cli_argv(op: &Operation, args: &Map<String, Value>, key: Option<&str>) -> Vec<String> {
    let spec = spec();
    let mut argv = Vec::new();
    let global = |name: &str| {
        spec.globals
            .iter()
            .find(|g| g.name == name)
            .map(|g| format!("--{}", g.cli_flag))
            .unwrap()
    };
    if let Some(key) = key {
        argv.push(global("idempotency_key"));
        argv.push(key.to_string());
    }
    let mut rest = Vec::new();
    for (name, value) in args {
        if value.is_null() {
            continue;
        }
        if name == "timeline_id" {
            argv.push(global("timeline_id"));
            argv.push(text_of(value));
            continue;
        }
        let Some(param) = op.params.iter().find(|p| &p.name == name) else {
            // Not a parameter of this operation: pass it as a flag so the CLI rejects it too.
            rest.push(format!("--{}", name.replace('_', "-")));
            rest.push(text_of(value));
            continue;
        };
        let def = spec.type_def(&param.ty);
        match (def.kind, value) {
            (TypeKind::Object, Value::Object(fields)) => {
                for (field_name, field_value) in fields {
                    if field_value.is_null() {
                        continue;
                    }
                    let flag = def
                        .fields
                        .iter()
                        .find(|f| &f.name == field_name)
                        .map(|f| f.cli_flag.clone())
                        .unwrap_or_else(|| format!("{}-{}", param.name, field_name));
                    rest.push(format!("--{flag}"));
                    rest.push(text_of(field_value));
                }
            }
            (TypeKind::List, Value::Array(items)) => {
                rest.push(format!("--{}", param.flag()));
                rest.push(items.iter().map(text_of).collect::<Vec<_>>().join(","));
            }
            // A switch: true is the bare flag, false is no flag at all.
            (TypeKind::Bool, Value::Bool(true)) => rest.push(format!("--{}", param.flag())),
            (TypeKind::Bool, Value::Bool(false)) => {}
            _ => {
                rest.push(format!("--{}", param.flag()));
                rest.push(text_of(value));
            }
        }
    }
    argv.extend(op.cli.split(' ').map(str::to_string));
    argv.extend(rest);
    argv
}

/// The clock of a case that sets no TIMELINE_NOW (2026-01-01T00:00:00Z).
const CLOCK: &str = "1767225600";

fn base_command(bin: &str, dir: &Path, env: &BTreeMap<String, String>) -> Command {
    let mut cmd = Command::new(bin);
    cmd.env_remove("TIMELINE_DB")
        .env_remove("TIMELINE_NOW")
        .env_remove("TIMELINE_FAULT_STEP")
        .env("HOME", dir.join("home"))
        .env("USERPROFILE", dir.join("home"))
        .current_dir(dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// The case's `tl-mcp` (driven by `common::McpSession`), with the protocol it negotiated and the
/// environment it was started with (another environment restarts it).
struct CaseSession {
    mcp: common::McpSession,
    protocol: String,
    env: BTreeMap<String, String>,
}

impl CaseSession {
    fn start(
        dir: &Path,
        db: &Path,
        env: &BTreeMap<String, String>,
        protocol: Option<&str>,
    ) -> Result<CaseSession, String> {
        let mut cmd = base_command(TL_MCP, dir, env);
        cmd.arg("--db").arg(db);
        let mut session = CaseSession {
            mcp: common::McpSession::try_open_command(cmd)?,
            // Before initialize the server follows the latest version.
            protocol: spec().latest_protocol_version().to_string(),
            env: env.clone(),
        };
        if let Some(version) = protocol {
            let id = session.fresh_id();
            let response = session.request(&json!({
                "jsonrpc": "2.0", "id": id, "method": "initialize",
                "params": {"protocolVersion": version, "capabilities": {},
                           "clientInfo": {"name": "conformance", "version": "1"}}
            }))?;
            let negotiated = response["result"]["protocolVersion"]
                .as_str()
                .ok_or_else(|| format!("initialize gave no protocolVersion: {response}"))?;
            session.protocol = negotiated.to_string();
            session.send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)?;
        }
        Ok(session)
    }

    fn fresh_id(&mut self) -> u64 {
        self.mcp.fresh_id()
    }

    fn send_bytes(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.mcp.try_send_bytes(bytes)
    }

    fn send_line(&mut self, line: &str) -> Result<(), String> {
        self.send_bytes(line.as_bytes())
    }

    fn read_response(&mut self) -> Result<Value, String> {
        let line = self.mcp.try_recv()?;
        serde_json::from_str(&line)
            .map_err(|e| format!("tl-mcp wrote a line that is not JSON ({e}): {line:?}"))
    }

    /// Send a request and return the next line, which must be its response.
    fn request(&mut self, request: &Value) -> Result<Value, String> {
        self.send_line(&request.to_string())?;
        let response = self.read_response()?;
        if response.get("id") != request.get("id") {
            return Err(format!(
                "response id {:?} does not match request id {:?}: {response}",
                response.get("id"),
                request.get("id")
            ));
        }
        Ok(response)
    }

    /// Prove that nothing was answered to what was sent before: the next line answers a ping.
    fn expect_silence(&mut self) -> Result<(), String> {
        let id = format!("silence-probe-{}", self.fresh_id());
        self.send_line(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string())?;
        let response = self.read_response()?;
        if response.get("id") != Some(&json!(id)) {
            return Err(format!("expected no response, got {response}"));
        }
        Ok(())
    }

    fn close(self) {
        self.mcp.close();
    }
}

struct Runner<'a> {
    fe: FrontEnd,
    engine: Engine,
    case: &'a Case,
    dir: TempDir,
    db: PathBuf,
    case_env: BTreeMap<String, String>,
    mcp: Option<CaseSession>,
}

fn env_of(value: Option<&Value>) -> BTreeMap<String, String> {
    value
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.clone(), text_of(v))).collect())
        .unwrap_or_default()
}

impl<'a> Runner<'a> {
    fn new(fe: FrontEnd, engine: Engine, case: &'a Case) -> Runner<'a> {
        let dir = TempDir::new();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        let db = match (engine, case.value.get("db_path").and_then(Value::as_str)) {
            (Engine::Postgres, None) => PathBuf::from(
                common::postgres::fresh_uri().expect("run_all checks for a server first"),
            ),
            (_, path) => dir.path().join(path.unwrap_or(engine.file_name())),
        };
        Runner {
            fe,
            engine,
            case,
            case_env: {
                // A fixed clock unless the case sets one, so creation times in results are exact.
                let mut env = BTreeMap::from([("TIMELINE_NOW".to_string(), CLOCK.to_string())]);
                env.extend(env_of(case.value.get("env")));
                env
            },
            dir,
            db,
            mcp: None,
        }
    }

    fn protocol(&self) -> Option<String> {
        if self.case.value.get("mcp_initialize") == Some(&Value::Bool(false)) {
            return None;
        }
        Some(
            self.case
                .value
                .get("mcp_protocol_version")
                .and_then(Value::as_str)
                .unwrap_or("2025-11-25")
                .to_string(),
        )
    }

    /// The MCP session for a step with this environment; a different environment restarts the server
    /// (which also proves state survives restarts).
    fn session(&mut self, env: &BTreeMap<String, String>) -> Result<&mut CaseSession, String> {
        if self.mcp.as_ref().is_some_and(|s| &s.env != env) {
            self.mcp.take().unwrap().close();
        }
        if self.mcp.is_none() {
            let protocol = self.protocol();
            self.mcp = Some(CaseSession::start(
                self.dir.path(),
                &self.db,
                env,
                protocol.as_deref(),
            )?);
        }
        Ok(self.mcp.as_mut().unwrap())
    }

    /// What a change would alter (`common::stored_state`).
    fn db_bytes(&self) -> Option<Vec<u8>> {
        common::stored_state(&self.db)
    }

    fn run(mut self) -> Result<(), String> {
        let steps = self.case.steps().to_vec();
        for (i, step) in steps.iter().enumerate() {
            let only = step.get("only").and_then(Value::as_str);
            if only.is_some_and(|o| o != self.fe.name()) {
                continue;
            }
            let step = substitute(step, self.dir.path(), self.engine);
            let before = self.db_bytes();
            let result = if step.get("op").is_some() {
                self.op_step(&step)
            } else if step.get("raw").is_some()
                || step.get("raw_hex").is_some()
                || step.get("raw_filler_bytes").is_some()
            {
                if self.fe == FrontEnd::Mcp {
                    self.raw_step(&step)
                } else {
                    Err("a raw step needs \"only\": \"mcp\" or an MCP-only case".into())
                }
            } else {
                Err("a step needs \"op\" or \"raw\"".into())
            };
            let result = result.and_then(|()| {
                if step.get("expect_db_unchanged") == Some(&Value::Bool(true))
                    && self.db_bytes() != before
                {
                    return Err(
                        "the database file changed but the step expects it unchanged".into(),
                    );
                }
                if step.get("expect_db_exists") == Some(&Value::Bool(false)) && self.db.exists() {
                    return Err("the database file exists but the step expects none".into());
                }
                Ok(())
            });
            if let Err(problem) = result {
                if let Some(session) = self.mcp.take() {
                    session.close();
                }
                return Err(format!(
                    "step {} ({}): {problem}",
                    i + 1,
                    step.get("op")
                        .or(step.get("note"))
                        .map(text_of)
                        .unwrap_or_else(|| "raw".into())
                ));
            }
        }
        if let Some(session) = self.mcp.take() {
            session.close();
        }
        Ok(())
    }

    fn step_env(&self, step: &Value) -> BTreeMap<String, String> {
        let mut env = self.case_env.clone();
        env.extend(env_of(step.get("env")));
        env
    }

    fn op_step(&mut self, step: &Value) -> Result<(), String> {
        let op_name = step["op"].as_str().ok_or("op must be a string")?;
        let op = spec()
            .operation(op_name)
            .ok_or_else(|| format!("unknown operation {op_name}"))?;
        let empty = Map::new();
        let args = step
            .get("args")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let key = step.get("key").and_then(Value::as_str);
        let env = self.step_env(step);
        let outcome = match self.fe {
            FrontEnd::Cli => {
                let argv = cli_argv(op, args, key);
                let mut cmd = base_command(TL, self.dir.path(), &env);
                cmd.arg("--db")
                    .arg(&self.db)
                    .args(&argv)
                    .stdin(Stdio::null());
                let out = crate::common::try_output_of(&mut cmd)
                    .map_err(|e| format!("cannot run tl: {e}"))?;
                let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
                let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
                let code = i64::from(out.status.code().unwrap_or(-1));
                let shown =
                    || format!("tl {argv:?} -> exit {code}, stdout {stdout:?}, stderr {stderr:?}");
                if code == 0 {
                    if !stderr.is_empty() {
                        return Err(format!("success with output on stderr: {}", shown()));
                    }
                    let value: Value = serde_json::from_str(&stdout)
                        .map_err(|e| format!("stdout is not JSON ({e}): {}", shown()))?;
                    // Exact bytes: one compact JSON line in the documented key order.
                    if let Some(expected) = step.pointer("/expect/result")
                        && stdout != format!("{expected}\n")
                    {
                        return Err(format!("expected stdout {expected}\n got {}", shown()));
                    }
                    Outcome::Ok(value)
                } else {
                    if !stdout.is_empty() {
                        return Err(format!("failure with output on stdout: {}", shown()));
                    }
                    let value: Value = serde_json::from_str(&stderr)
                        .map_err(|e| format!("stderr is not one JSON object ({e}): {}", shown()))?;
                    if let Some(message) = step
                        .pointer("/expect/error")
                        .and_then(|m| expected_message(m, FrontEnd::Cli))
                    {
                        let mut object = Map::new();
                        object.insert("error".into(), message.clone());
                        if let Some(data) = step.pointer("/expect/data") {
                            object.insert("data".into(), data.clone());
                        }
                        let wanted = format!("{}\n", Value::Object(object));
                        if stderr != wanted {
                            return Err(format!("expected stderr {wanted:?}\n got {}", shown()));
                        }
                    }
                    Outcome::Err {
                        code: Some(code),
                        message: value["error"].as_str().unwrap_or_default().to_string(),
                        data: value.get("data").cloned(),
                    }
                }
            }
            FrontEnd::Mcp => {
                let tool = op.mcp.clone().ok_or_else(|| {
                    format!("{op_name} has no MCP tool; mark the step \"only\": \"cli\"")
                })?;
                let mut arguments = args.clone();
                let mut params = Map::new();
                params.insert("name".into(), json!(tool));
                if let Some(key) = key {
                    match step.get("key_placement").and_then(Value::as_str) {
                        Some("arguments") => {
                            arguments.insert("idempotency_key".into(), json!(key));
                        }
                        Some("both") => {
                            arguments.insert("idempotency_key".into(), json!(key));
                            params.insert("idempotency_key".into(), json!(key));
                        }
                        _ => {
                            params.insert("idempotency_key".into(), json!(key));
                        }
                    }
                }
                params.insert("arguments".into(), Value::Object(arguments));
                let session = self.session(&env)?;
                let id = session.fresh_id();
                let request =
                    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
                let response = session.request(&request)?;
                let structured_from = &spec().constants.mcp_structured_content_from;
                let protocol = session.protocol.clone();
                if response.get("jsonrpc") != Some(&json!("2.0")) {
                    return Err(format!("response without jsonrpc 2.0: {response}"));
                }
                if let Some(error) = response.get("error") {
                    Outcome::Err {
                        code: Some(error["code"].as_i64().unwrap_or(0)),
                        message: error["message"].as_str().unwrap_or_default().to_string(),
                        data: error.get("data").filter(|d| !d.is_null()).cloned(),
                    }
                } else {
                    let result = &response["result"];
                    let text = result
                        .pointer("/content/0/text")
                        .and_then(Value::as_str)
                        .ok_or_else(|| format!("no result.content[0].text: {response}"))?;
                    let value: Value = serde_json::from_str(text)
                        .map_err(|e| format!("content[0].text is not JSON ({e}): {response}"))?;
                    // From 2025-06-18 every result, error results included, carries the same object
                    // as structuredContent, and it must match the tool's outputSchema.
                    if protocol.as_str() >= structured_from.as_str() {
                        if result.get("structuredContent") != Some(&value) {
                            return Err(format!(
                                "structuredContent must equal the text result for protocol {protocol}: {response}"
                            ));
                        }
                        check_structured(&tool, &value)?;
                    } else if result.get("structuredContent").is_some() {
                        return Err(format!(
                            "no structuredContent before {structured_from}: {response}"
                        ));
                    }
                    match result.get("isError") {
                        Some(Value::Bool(true)) => Outcome::Err {
                            code: None,
                            message: value["error"].as_str().unwrap_or_default().to_string(),
                            data: value.get("data").cloned(),
                        },
                        None => match &op.mcp_result_key {
                            // A list comes wrapped in an object; the cases hold the list.
                            Some(key) => Outcome::Ok(value.get(key).cloned().ok_or_else(|| {
                                format!("the result is not wrapped under {key:?}: {response}")
                            })?),
                            None => Outcome::Ok(value),
                        },
                        Some(other) => {
                            return Err(format!("isError must be true or absent, got {other}"));
                        }
                    }
                }
            }
        };
        let protocol = self.mcp.as_ref().map(|m| m.protocol.clone());
        check_outcome(self.fe, protocol.as_deref(), step, outcome)
    }

    fn raw_step(&mut self, step: &Value) -> Result<(), String> {
        let env = self.step_env(step);
        let session = self.session(&env)?;
        let bytes: Vec<u8> = if let Some(raw) = step.get("raw") {
            match raw {
                Value::String(s) => s.clone().into_bytes(),
                other => other.to_string().into_bytes(),
            }
        } else if let Some(hex) = step.get("raw_hex").and_then(Value::as_str) {
            let digits: Vec<u8> = hex.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
            digits
                .chunks(2)
                .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap())
                .collect()
        } else {
            let len = step["raw_filler_bytes"]
                .as_u64()
                .ok_or("raw_filler_bytes must be a number")?;
            vec![b'x'; len as usize]
        };
        session.send_bytes(&bytes)?;
        match step.get("expect_response") {
            None => Err("a raw step needs expect_response (null for none)".into()),
            Some(Value::Null) => session.expect_silence(),
            Some(expected) => {
                let actual = session.read_response()?;
                let ok = match step.get("match").and_then(Value::as_str) {
                    Some("subset") => subset(expected, &actual),
                    _ => expected == &actual,
                };
                if ok {
                    Ok(())
                } else {
                    Err(format!("expected response {expected}\n got {actual}"))
                }
            }
        }
    }
}

fn check_outcome(
    fe: FrontEnd,
    protocol: Option<&str>,
    step: &Value,
    outcome: Outcome,
) -> Result<(), String> {
    let expect = step.get("expect");
    let kind = expect
        .and_then(|e| e.get("error_kind"))
        .and_then(Value::as_str);
    match (expect, outcome) {
        (None, Outcome::Ok(_)) => Ok(()),
        (Some(e), Outcome::Ok(value)) if e.get("result_subset").is_some() => {
            if subset(&e["result_subset"], &value) {
                Ok(())
            } else {
                Err(format!(
                    "expected a result containing {}\n got {value}",
                    e["result_subset"]
                ))
            }
        }
        (Some(e), Outcome::Ok(value)) if e.get("result").is_some() => {
            if e["result"] == value {
                Ok(())
            } else {
                Err(format!("expected result {}\n got {value}", e["result"]))
            }
        }
        (Some(e), Outcome::Ok(value)) if e.as_object().is_some_and(Map::is_empty) => {
            let _ = value;
            Ok(())
        }
        (_, Outcome::Ok(value)) => Err(format!("expected an error, got result {value}")),
        (None, Outcome::Err { code, message, .. }) => {
            Err(format!("expected success, got error {code:?}: {message}"))
        }
        (
            Some(e),
            Outcome::Err {
                code,
                message,
                data,
            },
        ) => {
            if e.get("result").is_some() {
                return Err(format!(
                    "expected result {}\n got error {code:?}: {message} {data:?}",
                    e["result"]
                ));
            }
            check_error_form(fe, protocol, kind, code, &message)?;
            if let Some(expected) = e
                .get("error")
                .and_then(|expected| expected_message(expected, fe))
            {
                if expected.as_str() != Some(message.as_str()) {
                    return Err(format!("expected error {expected}\n got {message:?}"));
                }
                if e.get("data") != data.as_ref() {
                    return Err(format!(
                        "expected error data {:?}\n got {data:?}",
                        e.get("data")
                    ));
                }
            }
            Ok(())
        }
    }
}

/// An error has the form its kind takes on the front-end: the spec's exit code on the CLI. Over MCP a
/// failure of the tool is a result with `isError: true`; only an argument error may be a JSON-RPC
/// error (-32602), and only before the version that made argument errors tool errors. Without
/// `error_kind` the error is a domain error: not exit code 2, not a JSON-RPC error.
fn check_error_form(
    fe: FrontEnd,
    protocol: Option<&str>,
    kind: Option<&str>,
    code: Option<i64>,
    message: &str,
) -> Result<(), String> {
    let spec = spec();
    let invalid = "invalid_argument";
    if let Some(kind) = kind
        && !spec.errors.contains_key(kind)
    {
        return Err(format!("unknown error_kind {kind}"));
    }
    match fe {
        FrontEnd::Cli => {
            let want = i64::from(spec.errors[kind.unwrap_or(invalid)].exit_code);
            match kind {
                Some(kind) if code != Some(want) => Err(format!(
                    "expected error kind {kind} (exit code {want}), got {code:?}: {message}"
                )),
                None if code == Some(want) => Err(format!(
                    "expected a domain error, got invalid argument: {message}"
                )),
                _ => Ok(()),
            }
        }
        FrontEnd::Mcp => match code {
            None => Ok(()),
            Some(code) => {
                let before = protocol.is_some_and(|p| {
                    p < spec
                        .constants
                        .mcp_argument_errors_as_tool_errors_from
                        .as_str()
                });
                let want = spec.errors[invalid].mcp_code;
                if kind == Some(invalid) && before && Some(code) == want {
                    Ok(())
                } else {
                    Err(format!(
                        "expected a tool error (isError) for {}, got JSON-RPC error {code}: {message}",
                        kind.unwrap_or("a domain error")
                    ))
                }
            }
        },
    }
}

/// The storage engine a run uses: every case runs on both (S8), through a database file whose name
/// picks the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Engine {
    Json,
    Sqlite,
    Postgres,
}

impl Engine {
    fn name(self) -> &'static str {
        match self {
            Engine::Json => "json",
            Engine::Sqlite => "sqlite",
            Engine::Postgres => "postgres",
        }
    }

    fn file_name(self) -> &'static str {
        match self {
            Engine::Json => "db.json",
            Engine::Sqlite | Engine::Postgres => "db.sqlite",
        }
    }
}

/// Cases about database files that a server database does not have, with why; each has its
/// PostgreSQL counterpart in `store::postgres_*`.
const FILE_CASES: &[(&str, &str)] = &[(
    "db_info",
    "its results name a file path and size; tests/suite/store.rs checks db info on PostgreSQL",
)];

fn run_all(fe: FrontEnd, engine: Engine) {
    if engine == Engine::Postgres && common::postgres::server().is_none() {
        return;
    }
    let cases = load_cases();
    let filter = std::env::var("CONFORMANCE_CASE").ok();
    let mut failures = Vec::new();
    let mut ran = 0;
    for case in &cases {
        if !case.runs_on(fe)
            || (engine == Engine::Postgres && FILE_CASES.iter().any(|(name, _)| *name == case.name))
            || filter
                .as_ref()
                .is_some_and(|f| !case.name.contains(f.as_str()))
        {
            continue;
        }
        ran += 1;
        if let Err(problem) = Runner::new(fe, engine, case).run() {
            failures.push(format!(
                "[{} on {}] {}: {problem}",
                fe.name(),
                engine.name(),
                case.name
            ));
        }
    }
    eprintln!(
        "{} conformance on {}: {ran} cases run, {} failed",
        fe.name(),
        engine.name(),
        failures.len()
    );
    assert!(ran > 0, "no conformance case ran for {}", fe.name());
    assert!(
        failures.is_empty(),
        "{} of {ran} cases failed through {} on {}:\n\n{}",
        failures.len(),
        fe.name(),
        engine.name(),
        failures.join("\n\n")
    );
}

#[test]
fn every_case_passes_through_tl_on_json() {
    run_all(FrontEnd::Cli, Engine::Json);
}

#[test]
fn every_case_passes_through_tl_on_sqlite() {
    run_all(FrontEnd::Cli, Engine::Sqlite);
}

#[test]
fn every_case_passes_through_tl_mcp_on_json() {
    run_all(FrontEnd::Mcp, Engine::Json);
}

#[test]
fn every_case_passes_through_tl_mcp_on_sqlite() {
    run_all(FrontEnd::Mcp, Engine::Sqlite);
}

#[test]
fn every_case_passes_through_tl_on_postgres() {
    run_all(FrontEnd::Cli, Engine::Postgres);
}

#[test]
fn every_case_passes_through_tl_mcp_on_postgres() {
    run_all(FrontEnd::Mcp, Engine::Postgres);
}

fn index() -> Value {
    let text = std::fs::read_to_string(root().join("conformance/index.json")).unwrap();
    serde_json::from_str(&text).expect("conformance/index.json is JSON")
}

/// The requirement IDs of the digest, by letter, if the digest is available beside the repository.
fn requirement_ids_from_digest() -> Option<BTreeSet<String>> {
    let candidates = [
        std::env::var_os("TIMELINE_REQUIREMENTS").map(PathBuf::from),
        Some(root().join("../shared/reference/requirements.md")),
        Some(PathBuf::from("/work/shared/reference/requirements.md")),
    ];
    let text = candidates
        .into_iter()
        .flatten()
        .find_map(|p| std::fs::read_to_string(p).ok())?;
    let mut ids = BTreeSet::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("- ") else {
            continue;
        };
        let id: String = rest.chars().take_while(|c| !c.is_whitespace()).collect();
        let mut chars = id.chars();
        let letter = chars.next();
        if letter.is_some_and(char::is_alphabetic)
            && !id.is_empty()
            && chars.clone().count() > 0
            && chars.all(|c| c.is_ascii_digit())
        {
            ids.insert(id);
        }
    }
    Some(ids)
}

#[test]
fn index_covers_every_observable_requirement() {
    let index = index();
    let cases = load_cases();
    let names: BTreeSet<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    let covered = index["requirements"]
        .as_object()
        .expect("index.requirements");
    let excluded = index["not_covered"].as_object().expect("index.not_covered");
    let letters: Vec<String> = index["letters"]
        .as_array()
        .expect("index.letters")
        .iter()
        .map(text_of)
        .collect();
    let mut problems = Vec::new();
    // Every case named in the index exists, and the index agrees with each case's own list.
    for (id, list) in covered {
        let list: BTreeSet<String> = list.as_array().unwrap().iter().map(text_of).collect();
        if list.is_empty() {
            problems.push(format!("{id} has no case"));
        }
        for name in &list {
            if !names.contains(name.as_str()) {
                problems.push(format!("{id}: case {name} does not exist"));
            }
        }
        let claimed: BTreeSet<String> = cases
            .iter()
            .filter(|c| c.requirements().contains(id))
            .map(|c| c.name.clone())
            .collect();
        if claimed != list {
            problems.push(format!(
                "{id}: index lists {list:?} but the cases that name {id} are {claimed:?}"
            ));
        }
        if excluded.contains_key(id) {
            problems.push(format!("{id} is both covered and listed as not covered"));
        }
    }
    for case in &cases {
        if case.requirements().is_empty() {
            problems.push(format!("case {} names no requirement", case.name));
        }
        for id in case.requirements() {
            if !covered.contains_key(&id) {
                problems.push(format!(
                    "case {} names {id}, which the index lacks",
                    case.name
                ));
            }
        }
    }
    for (id, reason) in excluded {
        if reason.as_str().is_none_or(|r| r.len() < 10) {
            problems.push(format!("{id}: not_covered needs a reason"));
        }
    }
    // Every requirement of the observable letters is either covered or excluded with a reason.
    match requirement_ids_from_digest() {
        Some(ids) => {
            for id in ids {
                let letter: String = id.chars().take_while(|c| c.is_alphabetic()).collect();
                if letters.contains(&letter)
                    && !covered.contains_key(&id)
                    && !excluded.contains_key(&id)
                {
                    problems.push(format!(
                        "requirement {id} has no case and no reason in not_covered"
                    ));
                }
            }
        }
        None => eprintln!(
            "note: requirements digest not found; checked the index against itself only (set TIMELINE_REQUIREMENTS)"
        ),
    }
    for id in index["observable"].as_array().expect("index.observable") {
        let id = text_of(id);
        if !covered.contains_key(&id) {
            problems.push(format!("observable requirement {id} has no case"));
        }
    }
    assert!(
        problems.is_empty(),
        "index problems:\n{}",
        problems.join("\n")
    );
}

#[test]
fn every_mcp_operation_has_a_case() {
    let cases = load_cases();
    let mut used: BTreeMap<String, (bool, bool)> = BTreeMap::new();
    for case in &cases {
        for step in case.steps() {
            if let Some(op) = step.get("op").and_then(Value::as_str) {
                let entry = used.entry(op.to_string()).or_default();
                let only = step.get("only").and_then(Value::as_str);
                let ok = step.get("expect").is_none_or(|e| e.get("result").is_some());
                if ok && only != Some("mcp") && case.runs_on(FrontEnd::Cli) {
                    entry.0 = true;
                }
                if ok && only != Some("cli") && case.runs_on(FrontEnd::Mcp) {
                    entry.1 = true;
                }
            }
        }
    }
    let mut missing = Vec::new();
    for op in &spec().operations {
        let Some(tool) = &op.mcp else { continue };
        let (cli, mcp) = used.get(&op.name).copied().unwrap_or_default();
        if !(cli && mcp) {
            missing.push(format!(
                "{} ({tool}): a successful step through both tl and tl-mcp",
                op.name
            ));
        }
    }
    assert!(
        missing.is_empty(),
        "operations without conformance cases:\n{}",
        missing.join("\n")
    );
}

#[test]
fn case_files_are_well_formed() {
    let known_step_keys = [
        "op",
        "args",
        "key",
        "key_placement",
        "env",
        "only",
        "expect",
        "expect_db_unchanged",
        "expect_db_exists",
        "note",
        "raw",
        "raw_hex",
        "raw_filler_bytes",
        "expect_response",
        "match",
    ];
    let known_case_keys = [
        "name",
        "description",
        "requirements",
        "front_ends",
        "env",
        "db_path",
        "mcp_protocol_version",
        "mcp_initialize",
        "steps",
    ];
    let mut problems = Vec::new();
    for case in load_cases() {
        for key in case.value.as_object().unwrap().keys() {
            if !known_case_keys.contains(&key.as_str()) {
                problems.push(format!("{}: unknown case key {key}", case.name));
            }
        }
        if case.value["description"].as_str().is_none_or(str::is_empty) {
            problems.push(format!("{}: needs a description", case.name));
        }
        if case.steps().is_empty() {
            problems.push(format!("{}: has no steps", case.name));
        }
        for (i, step) in case.steps().iter().enumerate() {
            for key in step
                .as_object()
                .map(|m| m.keys().collect())
                .unwrap_or(vec![])
            {
                if !known_step_keys.contains(&key.as_str()) {
                    problems.push(format!("{} step {}: unknown key {key}", case.name, i + 1));
                }
            }
            if let Some(op) = step.get("op").and_then(Value::as_str)
                && spec().operation(op).is_none()
            {
                problems.push(format!("{} step {}: unknown op {op}", case.name, i + 1));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every tool's `inputSchema` and `outputSchema` is a valid JSON Schema 2020-12 (the dialect MCP
/// assumes when a schema names none) and compiles, `$ref`s included. The MCP runs above check every
/// `structuredContent` against its tool's `outputSchema`.
#[test]
fn tool_schemas_are_json_schema_2020_12() {
    let text = std::fs::read_to_string(root().join("generated/tools.json")).unwrap();
    let tools: Value = serde_json::from_str(&text).unwrap();
    let mut problems = Vec::new();
    for tool in tools["tools"].as_array().unwrap() {
        for which in ["inputSchema", "outputSchema"] {
            let schema = &tool[which];
            if let Err(e) = jsonschema::draft202012::meta::validate(schema) {
                problems.push(format!("{} {which}: {e}", tool["name"]));
            }
            if schema["type"] != json!("object") {
                problems.push(format!("{} {which}: MCP needs type object", tool["name"]));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // Compiling resolves every $ref; a broken one panics here.
    assert_eq!(tool_schemas().len(), 21);
    // The error object validates against every outputSchema, and a wrong result does not.
    for name in tool_schemas().keys() {
        check_structured(name, &json!({"error": "x", "data": {"k": 1}})).unwrap();
        assert!(check_structured(name, &json!({"unexpected": true})).is_err());
    }
}
