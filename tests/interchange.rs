//! Import and export in other tools' formats (issue 15), through the real `tl` on both storage
//! engines: ChatGPT and Claude.ai exports (file, folder, zip), OpenAI and Anthropic request bodies,
//! round trips, double imports, malformed files, the budget layout of an export, and a 2,000-message
//! import in one transaction. The fixtures under tests/fixtures/interchange/ are synthetic and follow
//! the published formats.

mod common;

use common::{Db, Run, TempDir};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/interchange")
        .join(name)
}

fn fixture_str(name: &str) -> String {
    fixture(name).display().to_string()
}

fn fixture_json(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture(name)).unwrap()).unwrap()
}

/// A database with a fixed clock, not created yet.
fn db() -> Db {
    let mut db = Db::new();
    db.env("TIMELINE_NOW", "1750000000");
    db
}

/// `tl import` of a fixture; the parsed report.
#[track_caller]
fn import(db: &Db, format: &str, name: &str) -> Value {
    db.tl(&["import", "--format", format, "--input", &fixture_str(name)])
        .json()
}

/// The stdout of a successful run, nothing on stderr.
#[track_caller]
fn stdout(run: Run) -> String {
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
    run.stdout
}

const KYOTO_REPORT: &str = r#"{"timeline_id":"tl0","source_id":"conv-kyoto","title":"京都旅行 🗾 Kyoto trip","create_time_ms":1700000000123,"messages":9,"branches":["main","regen-1","edit-1"]}"#;
const CUSTOM_REPORT: &str = r#"{"timeline_id":"tl1","source_id":"conv-custom","title":"Custom instructions","create_time_ms":1700001000000,"messages":3,"branches":["main"]}"#;
const CHATGPT_KINDS: &str = r#"{"roles":{"assistant":6,"system":1,"tool":1,"user":4},"parts":{"code":1,"custom_instructions":1,"execution_output":1,"image":1,"text":9,"tool_call":1},"skipped":{"empty_system":1,"hidden_root":2}}"#;

/// The Kyoto conversation as imported: main is the path to current_node, in order of creation.
#[track_caller]
fn assert_kyoto(db: &Db) {
    db.tl(&["branches"]).ok(
        r#"[{"name":"main","head":"n7","current":true},{"name":"regen-1","head":"n2","current":false},{"name":"edit-1","head":"n9","current":false}]"#,
    );
    db.tl(&["context", "--node", "n7"]).ok(
        r#"[{"node":"n1","role":"user","text":"京都で3日間の旅行プランを作って 🗾","tokens":5},{"node":"n3","role":"assistant","text":"Day 1: Kinkaku-ji, Day 2: Arashiyama 🎋, Day 3: Uji 🍵","tokens":13},{"node":"n4","role":"user","text":"[image: file-service://file-abc123, 1024x768]\n\nこの写真はどこ？ Where is this?","tokens":18,"intent_tag":"image"},{"node":"n5","role":"assistant","text":"[tool call to python]\n\n```python\nprint(2 ** 10)\n```","tokens":13,"intent_tag":"tool_call"},{"node":"n6","role":"user","text":"[tool python]\n\n[execution output]\n1024","tokens":10,"intent_tag":"tool"},{"node":"n7","role":"assistant","text":"That is Kiyomizu-dera 🏯 (清水寺).","tokens":8}]"#,
    );
    // The regenerated answer and the edited prompt are branches of their own.
    db.tl(&["context", "--node", "n2"]).ok(
        r#"[{"node":"n1","role":"user","text":"京都で3日間の旅行プランを作って 🗾","tokens":5},{"node":"n2","role":"assistant","text":"Day 1: Fushimi Inari ⛩️, Day 2: Gion, Day 3: Nara 🦌","tokens":13}]"#,
    );
    db.tl(&["context", "--node", "n9"]).ok(
        r#"[{"node":"n8","role":"user","text":"Make it 2 days instead","tokens":6},{"node":"n9","role":"assistant","text":"Day 1: Fushimi Inari ⛩️, Day 2: Arashiyama 🎋","tokens":11}]"#,
    );
    db.tl(&["--timeline", "tl1", "context", "--node", "n3"]).ok(
        r#"[{"node":"n1","role":"system","text":"[custom instructions]\nI test software.\n\nAnswer in one line.","tokens":15,"intent_tag":"custom_instructions"},{"node":"n2","role":"user","text":"Hi!","tokens":1},{"node":"n3","role":"assistant","text":"Hello 👋","tokens":2}]"#,
    );
}

on_both_engines! {
    /// A ChatGPT conversations.json: one timeline per conversation, the malformed one reported, the
    /// title and times kept in the import record and the audit, the original parts in the note.
    #[test]
    fn chatgpt_export_file() {
        let db = db();
        db.tl(&["import", "--format", "chatgpt", "--input", &fixture_str("chatgpt-conversations.json")]).ok(&format!(
            r#"{{"format":"chatgpt","imported":2,"skipped":1,"messages":12,"timelines":[{KYOTO_REPORT},{CUSTOM_REPORT}],"skipped_conversations":[{{"file":"chatgpt-conversations.json","index":2,"source_id":"conv-broken","title":"Broken","reason":"it has no mapping object, so it is not a ChatGPT conversation"}}],"kinds":{CHATGPT_KINDS}}}"#
        ));
        assert_kyoto(&db);
        db.tl(&["node", "--node", "n6"]).ok(
            r#"{"node":"n6","timeline_id":"tl0","role":"user","text":"[tool python]\n\n[execution output]\n1024","tokens":10,"parent":"n5","children":["n7"],"zone":"hot","pinned":false,"path_tokens":59,"created_at":1700000060,"intent":{"tag":"tool","note":"{\"import\":\"chatgpt\",\"message\":{\"author\":{\"role\":\"tool\",\"name\":\"python\",\"metadata\":{}},\"content\":{\"content_type\":\"execution_output\",\"text\":\"1024\"}}}"},"summary":null}"#,
        );
        let value = db.value();
        let record = &value["imports"][0];
        assert_eq!(record["format"], "chatgpt");
        assert_eq!(record["source_key"], "conv-kyoto");
        assert_eq!(record["timeline"], "tl0");
        assert_eq!(record["title"], "京都旅行 🗾 Kyoto trip");
        assert_eq!(record["create_time_ms"], 1700000000123u64);
        assert_eq!(record["update_time_ms"], 1700000090500u64);
        assert_eq!(record["first_node"], "n1");
        assert_eq!(record["nodes"], 9);
        assert_eq!(record["message_ids"], json!(["u1", "a1", "a1r", "u2", "a2", "t2", "a3", "u1e", "a1e"]));
        assert_eq!(
            record["message_times_ms"],
            json!([1700000010000u64, 1700000020250u64, 1700000030000u64, 1700000040000u64, 1700000050000u64, 1700000060000u64, 1700000070000u64, 1700000080000u64, 1700000090000u64])
        );
        assert_eq!(record["ts"], 1750000000);
        assert_eq!(
            value["audit"],
            json!([
                {"ts": 1750000000, "op": "import", "timeline": "tl0", "from": "n1", "to": "n9", "result": {"format": "chatgpt", "source_id": "conv-kyoto", "title": "京都旅行 🗾 Kyoto trip", "messages": 9}},
                {"ts": 1750000000, "op": "import", "timeline": "tl1", "from": "n1", "to": "n3", "result": {"format": "chatgpt", "source_id": "conv-custom", "title": "Custom instructions", "messages": 3}}
            ])
        );
    }

    /// Importing the same file again adds nothing: every conversation is skipped with the timeline it
    /// went to, and the database is unchanged.
    #[test]
    fn double_import_adds_nothing() {
        let db = db();
        import(&db, "chatgpt", "chatgpt-conversations.json");
        let before = db.bytes();
        db.tl(&["import", "--format", "chatgpt", "--input", &fixture_str("chatgpt-conversations.json")]).ok(
            r#"{"format":"chatgpt","imported":0,"skipped":3,"messages":0,"timelines":[],"skipped_conversations":[{"file":"chatgpt-conversations.json","index":0,"source_id":"conv-kyoto","title":"京都旅行 🗾 Kyoto trip","reason":"already imported into tl0"},{"file":"chatgpt-conversations.json","index":1,"source_id":"conv-custom","title":"Custom instructions","reason":"already imported into tl1"},{"file":"chatgpt-conversations.json","index":2,"source_id":"conv-broken","title":"Broken","reason":"it has no mapping object, so it is not a ChatGPT conversation"}],"kinds":{"roles":{},"parts":{},"skipped":{}}}"#,
        );
        assert_eq!(db.bytes(), before);
        // The same conversations in the downloaded zip are the same conversations.
        let zip = import(&db, "chatgpt", "chatgpt-export.zip");
        assert_eq!((zip["imported"].clone(), zip["skipped"].clone()), (json!(0), json!(2)));
        assert_eq!(db.bytes(), before);
        // A conversation that changed since is imported again, as a new timeline that names the
        // earlier one.
        let mut changed = fixture_json("chatgpt-conversations.json");
        changed[0]["title"] = json!("Kyoto, renamed");
        let path = db.dir.path().join("changed.json");
        std::fs::write(&path, changed.to_string()).unwrap();
        let report = db.tl(&["import", "--format", "chatgpt", "--input", &path.display().to_string()]).json();
        assert_eq!(report["imported"], 1);
        assert_eq!(
            report["timelines"],
            json!([{"timeline_id": "tl2", "source_id": "conv-kyoto", "title": "Kyoto, renamed", "create_time_ms": 1700000000123u64, "messages": 9, "branches": ["main", "regen-1", "edit-1"], "earlier_import": "tl0"}])
        );
    }

    /// The export as downloaded: a zip with split conversations-000.json and -001.json among other
    /// files; and the same files in the unpacked folder.
    #[test]
    fn chatgpt_export_zip_and_folder() {
        let db = db();
        db.tl(&["import", "--format", "chatgpt", "--input", &fixture_str("chatgpt-export.zip")]).ok(&format!(
            r#"{{"format":"chatgpt","imported":2,"skipped":0,"messages":12,"timelines":[{KYOTO_REPORT},{CUSTOM_REPORT}],"skipped_conversations":[],"kinds":{CHATGPT_KINDS}}}"#
        ));
        assert_kyoto(&db);
        // Unpack the zip into a folder and import the folder into a new database.
        let unpacked = TempDir::new();
        let mut archive = zip::ZipArchive::new(std::fs::File::open(fixture("chatgpt-export.zip")).unwrap()).unwrap();
        for i in 0..archive.len() {
            let mut entry = archive.by_index(i).unwrap();
            let name = entry.name().unwrap().into_owned();
            let mut out = std::fs::File::create(unpacked.path().join(name)).unwrap();
            std::io::copy(&mut entry, &mut out).unwrap();
        }
        let other = db_other();
        other.tl(&["import", "--format", "chatgpt", "--input", &unpacked.path().display().to_string()]).ok(&format!(
            r#"{{"format":"chatgpt","imported":2,"skipped":0,"messages":12,"timelines":[{KYOTO_REPORT},{CUSTOM_REPORT}],"skipped_conversations":[],"kinds":{CHATGPT_KINDS}}}"#
        ));
        assert_kyoto(&other);
    }

    /// A Claude.ai export: linear conversations; thinking, tool use and results, attachments and
    /// files kept as text with their kinds; the empty and the malformed conversation reported.
    #[test]
    fn claude_export() {
        let db = db();
        db.tl(&["import", "--format", "claude", "--input", &fixture_str("claude-conversations.json")]).ok(
            r#"{"format":"claude","imported":1,"skipped":2,"messages":3,"timelines":[{"timeline_id":"tl0","source_id":"claude-conv-1","title":"Rust で JSON をストリーミング 🦀","create_time_ms":1709283600000,"messages":3,"branches":["main"]}],"skipped_conversations":[{"file":"claude-conversations.json","index":1,"source_id":"claude-conv-empty","reason":"it has no messages with any content"},{"file":"claude-conversations.json","index":2,"source_id":"claude-conv-bad","title":"Not a conversation","reason":"it has no chat_messages array, so it is not a Claude.ai conversation"}],"kinds":{"roles":{"assistant":1,"human":2},"parts":{"attachment":1,"file":1,"text":4,"thinking":1,"tool_call":1,"tool_result":1},"skipped":{"empty_message":1}}}"#,
        );
        db.tl(&["context", "--node", "n3"]).ok(
            r#"[{"node":"n1","role":"user","text":"How do I stream a large JSON array in Rust? 🦀\n\n[attachment: sample.json (application/json, 27 bytes)]\n[{\"id\": 1}, {\"id\": 2}]","tokens":31,"intent_tag":"attachment"},{"node":"n2","role":"assistant","text":"[thinking]\nThe user wants bounded memory.\n\nUse a Deserializer with a visitor over the sequence.\n\n[tool call: web_search({\"query\":\"serde_json stream array\"})]\n\n[tool result web_search]\nserde_json::StreamDeserializer docs\n\nそのあと要素ごとに処理します。","tokens":59,"intent_tag":"tool_call"},{"node":"n3","role":"user","text":"Thanks! 🙏\n\n[file: screenshot.png]","tokens":9,"intent_tag":"file"}]"#,
        );
        let record = db.value()["imports"][0].clone();
        assert_eq!(record["message_ids"], json!(["cm1", "cm2", "cm3"]));
        assert_eq!(record["message_times_ms"], json!([1709283600000u64, 1709283610500u64, 1709283900000u64]));
        assert_eq!(record["update_time_ms"], 1709283900123u64);
    }

    /// OpenAI messages imported and exported again are the same messages, byte for byte as
    /// indented JSON; as an Anthropic body, tool calls and results become blocks.
    #[test]
    fn openai_round_trip() {
        let db = db();
        db.tl(&["import", "--format", "openai", "--input", &fixture_str("openai-request.json")]).ok(
            r#"{"format":"openai","imported":1,"skipped":0,"messages":7,"timelines":[{"timeline_id":"tl0","messages":7,"branches":["main"]}],"skipped_conversations":[],"kinds":{"roles":{"assistant":2,"developer":1,"system":1,"tool":1,"user":2},"parts":{"image":1,"text":6,"tool_call":1,"tool_result":1},"skipped":{}}}"#,
        );
        let messages = fixture_json("openai-request.json")["messages"].clone();
        let exported = stdout(db.tl(&["export", "--format", "openai", "--node", "n7"]));
        assert_eq!(exported, format!("{}\n", serde_json::to_string_pretty(&messages).unwrap()));
        db.tl(&["context", "--node", "n5"]).ok(
            r#"[{"node":"n1","role":"system","text":"Answer like a travel guide.","tokens":7,"intent_tag":"developer"},{"node":"n2","role":"system","text":"You are helpful.","tokens":4},{"node":"n3","role":"user","text":"What is in this photo? 写真\n\n[image: data:image/png;base64 (8 bytes)]","tokens":17,"intent_tag":"image"},{"node":"n4","role":"assistant","text":"[tool call call_1: get_weather({\"city\": \"京都\"})]","tokens":12,"intent_tag":"tool_call"},{"node":"n5","role":"user","text":"[tool result call_1]\n\n晴れ 22°C ☀️","tokens":8,"intent_tag":"tool"}]"#,
        );
        let anthropic: Value = serde_json::from_str(&stdout(db.tl(&["export", "--format", "anthropic", "--node", "n7"]))).unwrap();
        assert_eq!(
            anthropic,
            json!({
                "system": "Answer like a travel guide.\n\nYou are helpful.",
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "What is in this photo? 写真"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}]},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "京都"}}]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "晴れ 22°C ☀️"}]},
                    {"role": "assistant", "content": "It is Kiyomizu-dera; the weather in Kyoto is sunny ☀️."},
                    {"role": "user", "content": "Thanks 🙏"}
                ]
            })
        );
    }

    /// An Anthropic request body imported and exported again gives the same system and messages;
    /// as OpenAI messages, tool_use becomes tool_calls and tool_result a tool message.
    #[test]
    fn anthropic_round_trip() {
        let db = db();
        db.tl(&["import", "--format", "anthropic", "--input", &fixture_str("anthropic-request.json")]).ok(
            r#"{"format":"anthropic","imported":1,"skipped":0,"messages":6,"timelines":[{"timeline_id":"tl0","messages":6,"branches":["main"]}],"skipped_conversations":[],"kinds":{"roles":{"assistant":2,"system":1,"user":3},"parts":{"image":1,"text":5,"tool_call":1,"tool_result":1},"skipped":{}}}"#,
        );
        let body = fixture_json("anthropic-request.json");
        let exported: Value = serde_json::from_str(&stdout(db.tl(&["export", "--format", "anthropic", "--node", "n6"]))).unwrap();
        assert_eq!(exported, json!({"system": body["system"], "messages": body["messages"]}));
        let openai: Value = serde_json::from_str(&stdout(db.tl(&["export", "--format", "openai", "--node", "n6"]))).unwrap();
        assert_eq!(
            openai,
            json!([
                {"role": "system", "content": "You are a concise travel guide. 簡潔に。"},
                {"role": "user", "content": "What's the weather in Kyoto? 🌤️"},
                {"role": "assistant", "content": "Let me check.", "tool_calls": [{"id": "toolu_01", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Kyoto\"}"}}]},
                {"role": "tool", "tool_call_id": "toolu_01", "content": "Sunny, 22°C"},
                {"role": "assistant", "content": "Sunny and 22°C ☀️."},
                {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/4AAQSkZJRg=="}}, {"type": "text", "text": "And this place?"}]}
            ])
        );
        db.tl(&["export", "--format", "markdown", "--node", "n3"]).ok(
            "# tl0: context of n3\n\n## n1 · system\n\nYou are a concise travel guide. 簡潔に。\n\n## n2 · user\n\nWhat's the weather in Kyoto? 🌤️\n\n## n3 · assistant · intent: tool_call\n\nLet me check.\n\n[tool call toolu_01: get_weather({\"city\":\"Kyoto\"})]",
        );
    }

    /// With --node, messages become a branch of an existing timeline; the same import again adds
    /// nothing; the options are checked against the format.
    #[test]
    fn import_as_a_branch() {
        let db = db();
        db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
        db.append("user", "Plan a trip", 3);
        db.append("assistant", "Where to?", 3);
        let input = fixture_str("openai-request.json");
        db.tl(&["import", "--format", "openai", "--input", &input, "--node", "n1"]).ok(
            r#"{"format":"openai","imported":1,"skipped":0,"messages":7,"timelines":[{"timeline_id":"tl0","messages":7,"from":"n1","branches":["import-1"]}],"skipped_conversations":[],"kinds":{"roles":{"assistant":2,"developer":1,"system":1,"tool":1,"user":2},"parts":{"image":1,"text":6,"tool_call":1,"tool_result":1},"skipped":{}}}"#,
        );
        db.tl(&["branches"]).ok(
            r#"[{"name":"main","head":"n2","current":true},{"name":"import-1","head":"n9","current":false}]"#,
        );
        let context = db.tl(&["context", "--node", "n4"]).json();
        assert_eq!(context[0]["text"], "Plan a trip");
        assert_eq!(context[1]["node"], "n3");
        assert_eq!(context[1]["intent_tag"], "developer");
        let before = db.bytes();
        let again = db.tl(&["import", "--format", "openai", "--input", &input, "--node", "n1"]).json();
        assert_eq!(again["skipped_conversations"][0]["reason"], "already imported into tl0 as branch \"import-1\"");
        assert_eq!(db.bytes(), before);
        // Elsewhere, under a name of one's own; a taken name is a conflict.
        let named = db.tl(&["--timeline", "tl0", "import", "--format", "anthropic", "--input", &fixture_str("anthropic-request.json"), "--node", "n0", "--branch", "from claude"]).json();
        assert_eq!(named["timelines"][0]["branches"], json!(["from claude"]));
        db.tl(&["import", "--format", "openai", "--input", &input, "--node", "n2", "--branch", "main"]).err(
            1,
            r#"{"error":"branch \"main\" already exists in tl0; choose another --branch, or list the branches with `tl branches`"}"#,
        );
        db.tl(&["import", "--format", "chatgpt", "--input", &fixture_str("chatgpt-export.zip"), "--node", "n1"]).err(
            2,
            r#"{"error":"invalid argument --node: a ChatGPT export holds whole conversations, each imported as a timeline of its own; --node is for --format openai and anthropic"}"#,
        );
        db.tl(&["--timeline", "tl0", "import", "--format", "openai", "--input", &input]).err(
            2,
            r#"{"error":"invalid argument --timeline: an import makes new timelines unless --node names where to attach the messages; pass --node too (--node n0 starts from the timeline's root)"}"#,
        );
        db.tl(&["import", "--format", "openai", "--input", &input, "--branch", "x"]).err(
            2,
            r#"{"error":"invalid argument --branch: it names the branch made by an import into an existing timeline, so it needs --node"}"#,
        );
        db.tl(&["import", "--format", "openai", "--input", &input, "--node", "n99"]).err(
            1,
            r#"{"error":"node not found: n99 does not exist in timeline tl0 (it has n1..n15); find the node you mean with `tl log` or `tl search --query ...`"}"#,
        );
    }

    /// A file that cannot be read as the named format is refused whole and nothing is written;
    /// never a panic.
    #[test]
    fn malformed_files_are_refused_whole() {
        let db = db();
        let dir = db.dir.path();
        let write = |name: &str, text: &[u8]| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            path.display().to_string()
        };
        // Two good conversations, then the file ends: refused, so the good ones are not imported
        // either.
        let mut truncated = std::fs::read(fixture("chatgpt-conversations.json")).unwrap();
        truncated.truncate(truncated.len() - 20);
        let cases: Vec<(&str, String, String)> = vec![
            ("chatgpt", write("truncated.json", &truncated), "is truncated: it ends inside conversation 2".into()),
            ("chatgpt", write("text.json", b"hello"), "is not a JSON array of conversations (it starts with 'h')".into()),
            ("chatgpt", write("empty.json", b""), "is empty (no JSON)".into()),
            ("claude", write("syntax.json", b"[{\"uuid\": \"a\", \"chat_messages\": [}]"), "is not valid JSON: '}' closes '[' at byte 33".into()),
            ("claude", write("latin1.json", b"[{\"uuid\": \"\xe9\"}]"), "is not valid JSON in conversation 0 (starting at byte 1): invalid unicode code point at line 1 column 11".into()),
            ("claude", write("after.json", b"[] []"), "has data after the end of its JSON at byte 3 ('[')".into()),
            ("openai", write("role.json", b"[{\"role\": \"user\", \"content\": \"a\"}, {\"content\": \"b\"}]"), "is not OpenAI Chat Completions messages: message 1 has no role".into()),
            ("openai", write("object.json", b"{\"model\": \"x\"}"), "is not OpenAI Chat Completions messages: it is an object without a messages array, so it is not OpenAI Chat Completions input".into()),
            ("anthropic", write("anthropic.json", b"{\"messages\": [{\"role\": \"user\", \"content\": 5}]}"), "is not an Anthropic Messages request body: message 0 has content that is neither a string nor an array of blocks".into()),
        ];
        for (format, path, problem) in cases {
            let shown = path.clone();
            let expected = format!("invalid argument --input: {shown} {problem}; nothing was imported");
            db.tl(&["import", "--format", format, "--input", &path])
                .err(2, &json!({ "error": expected }).to_string());
            assert!(!db.path.exists(), "{format} {path}: the database was created");
        }
        // A Claude export named as a ChatGPT one: none of its conversations is one.
        let claude = fixture_str("claude-conversations.json");
        db.tl(&["import", "--format", "chatgpt", "--input", &claude]).err(
            2,
            &json!({"error": format!("invalid argument --input: {claude} is not a ChatGPT export: none of its 3 conversation(s) could be read (the first: it has no mapping (it looks like a Claude.ai conversation: use --format claude)); check --format; nothing was imported")}).to_string(),
        );
        let missing = dir.join("missing.json").display().to_string();
        db.tl(&["import", "--format", "chatgpt", "--input", &missing]).err(
            2,
            &json!({"error": format!("invalid argument --input: {missing} does not exist")}).to_string(),
        );
        db.tl(&["import", "--format", "openai", "--input", &fixture_str("chatgpt-export.zip")]).err(
            2,
            &json!({"error": format!("invalid argument --input: {} is a zip archive; --format openai reads one JSON file", fixture_str("chatgpt-export.zip"))}).to_string(),
        );
        let not_zip = write("broken.zip", b"PK\x03\x04 not really a zip");
        let run = db.tl(&["import", "--format", "chatgpt", "--input", &not_zip]);
        assert_eq!(run.code, 2, "{run:?}");
        assert!(run.stderr.contains("cannot be read as a zip archive"), "{run:?}");
        assert!(!db.path.exists());
    }

    /// A parseable file with bad conversations imports the good ones and says why each other one
    /// was skipped: a cycle, a node that is not an object, nothing but empty messages.
    #[test]
    fn bad_conversations_are_skipped_with_reasons() {
        let db = db();
        let good = fixture_json("chatgpt-conversations.json")[1].clone();
        let cycle = json!({"id": "c-cycle", "title": "Cycle", "mapping": {
            "a": {"id": "a", "message": null, "parent": "b", "children": ["b"]},
            "b": {"id": "b", "message": null, "parent": "a", "children": ["a"]}}});
        let bad_node = json!({"id": "c-node", "mapping": {"a": 5}});
        let empty = json!({"id": "c-empty", "title": "Empty", "mapping": {
            "r": {"id": "r", "message": null, "parent": null, "children": ["s"]},
            "s": {"id": "s", "message": {"author": {"role": "system"}, "content": {"content_type": "text", "parts": [""]}}, "parent": "r", "children": []}}});
        let path = db.dir.path().join("mixed.json");
        std::fs::write(&path, json!([cycle, good, bad_node, 7, empty]).to_string()).unwrap();
        db.tl(&["import", "--format", "chatgpt", "--input", &path.display().to_string()]).ok(
            r#"{"format":"chatgpt","imported":1,"skipped":4,"messages":3,"timelines":[{"timeline_id":"tl0","source_id":"conv-custom","title":"Custom instructions","create_time_ms":1700001000000,"messages":3,"branches":["main"]}],"skipped_conversations":[{"file":"mixed.json","index":0,"source_id":"c-cycle","title":"Cycle","reason":"its mapping has a cycle (a node is its own ancestor)"},{"file":"mixed.json","index":2,"source_id":"c-node","reason":"mapping node \"a\" is not an object"},{"file":"mixed.json","index":3,"reason":"it is not a JSON object"},{"file":"mixed.json","index":4,"source_id":"c-empty","title":"Empty","reason":"it has no messages with any content"}],"kinds":{"roles":{"assistant":1,"system":1,"user":1},"parts":{"custom_instructions":1,"text":2},"skipped":{"hidden_root":1}}}"#,
        );
    }

    /// A text over the 1 MiB limit is split into nodes of at most 1 MiB (tagged continued) and
    /// exported whole again.
    #[test]
    fn long_texts_are_split_and_joined_again() {
        let db = db();
        let long: String = "長い文章 🦀 ".repeat(80_000);
        assert!(long.len() > 1 << 20);
        let messages = json!([{"role": "user", "content": long}, {"role": "assistant", "content": "ok"}]);
        let path = db.dir.path().join("long.json");
        std::fs::write(&path, messages.to_string()).unwrap();
        let report = db.tl(&["import", "--format", "openai", "--input", &path.display().to_string()]).json();
        assert_eq!(report["messages"], 3);
        assert_eq!(report["kinds"]["parts"]["split"], 1);
        let second = db.tl(&["node", "--node", "n2"]).json();
        assert_eq!(second["intent"], json!({"tag": "continued", "note": "{\"import\":\"openai\",\"part\":2,\"of\":2}"}));
        let first = db.tl(&["node", "--node", "n1"]).json();
        assert!(first["text"].as_str().unwrap().len() <= 1 << 20);
        let exported: Value = serde_json::from_str(&stdout(db.tl(&["export", "--format", "openai", "--node", "n3"]))).unwrap();
        assert_eq!(exported, messages);
    }

    /// export --max: the layout a budget would give, placeholders as text, nothing written; a
    /// placeholder the budget stored is shown as stored.
    #[test]
    fn export_with_a_budget_writes_nothing() {
        let db = Db::created_at("1750000000");
        for t in [100, 200, 300] {
            db.append("user", &format!("question {t}"), t);
            db.append("assistant", &format!("answer {t}"), t);
        }
        db.tl(&["pin", "--node", "n3"]).ok(r#"{"pinned":"n3"}"#);
        let before = db.bytes();
        db.tl(&["export", "--format", "markdown", "--node", "n6", "--max", "700"]).ok(
            "# tl0: context of n6 within 700 tokens\n\n## placeholder for n1..n1 · not stored\n\n[placeholder] 1 message(s) n1..n1 (100 tokens) omitted to fit the budget; read them as the context of n1 (MCP: timeline_context with node \"n1\"; CLI: tl context --node n1)\n\n## n2 · assistant\n\nanswer 100\n\n## n3 · user\n\nquestion 200\n\n## placeholder for n4..n5 · not stored\n\n[placeholder] 2 message(s) n4..n5 (500 tokens) omitted to fit the budget; read them as the context of n5 (MCP: timeline_context with node \"n5\"; CLI: tl context --node n5)\n\n## n6 · assistant\n\nanswer 300",
        );
        let anthropic: Value = serde_json::from_str(&stdout(db.tl(&["export", "--format", "anthropic", "--node", "n6", "--max", "700"]))).unwrap();
        assert_eq!(anthropic["messages"][2]["content"][1]["text"], "[placeholder] 2 message(s) n4..n5 (500 tokens) omitted to fit the budget; read them as the context of n5 (MCP: timeline_context with node \"n5\"; CLI: tl context --node n5)");
        assert_eq!(anthropic["messages"].as_array().unwrap().len(), 4);
        assert_eq!(db.bytes(), before);
        db.tl(&["export", "--format", "openai", "--node", "n6", "--max", "10"]).err(
            1,
            r#"{"error":"budget infeasible","data":{"required_tokens":564,"max_tokens":10}}"#,
        );
        // After a real budget the placeholders exist, and the export names them.
        db.tl(&["budget", "--node", "n6", "--max", "700"]).json();
        let markdown = stdout(db.tl(&["export", "--format", "markdown", "--node", "n6", "--max", "700"]));
        assert!(markdown.contains("\n## n7 · placeholder for n1..n1\n"), "{markdown}");
        assert!(markdown.contains("\n## n8 · placeholder for n4..n5\n"), "{markdown}");
        // A real summary is a system message for OpenAI, marked as a summary.
        db.tl(&["summarize", "--from", "n4", "--to", "n5", "--summary", "Asked about 300."]).ok(r#"{"node":"n9"}"#);
        let openai: Value = serde_json::from_str(&stdout(db.tl(&["export", "--format", "openai", "--node", "n6", "--max", "700"]))).unwrap();
        assert_eq!(openai[3], json!({"role": "system", "content": "[summary of n4..n5] Asked about 300."}));
    }

    /// --output writes a new file and prints the result; an existing file is never replaced; the
    /// options of each kind of export are checked.
    #[test]
    fn export_to_a_file() {
        let db = Db::created_at("1750000000");
        db.append("user", "Hello \u{1b}[2J \u{202e}", 3);
        db.append("assistant", "Hi", 1);
        let out = db.dir.path().join("context.json");
        let shown = out.display().to_string();
        db.tl(&["export", "--format", "openai", "--node", "n2", "--output", &shown]).ok(
            &format!(r#"{{"format":"openai","timeline_id":"tl0","output":{},"nodes":2,"node":"n2","messages":2}}"#, json!(shown)),
        );
        // Control and bidirectional characters are escaped; the value is the same.
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            "[\n  {\n    \"role\": \"user\",\n    \"content\": \"Hello \\u001b[2J \\u202e\"\n  },\n  {\n    \"role\": \"assistant\",\n    \"content\": \"Hi\"\n  }\n]\n"
        );
        db.tl(&["export", "--format", "markdown", "--node", "n2"]).ok(
            "# tl0: context of n2\n\n## n1 · user\n\nHello \\u001b[2J \\u202e\n\n## n2 · assistant\n\nHi",
        );
        db.tl(&["export", "--format", "openai", "--node", "n2", "--output", &shown]).err(
            1,
            &json!({"error": format!("the output file {shown} already exists; choose another name (export never overwrites a file, so changes you made to it are kept)")}).to_string(),
        );
        db.tl(&["export", "--format", "anthropic"]).err(
            2,
            r#"{"error":"invalid argument --node: --format anthropic exports the context of a message; pass --node with its ID (for example --node n4)"}"#,
        );
        db.tl(&["export", "--format", "ascii", "--max", "5"]).err(
            2,
            r#"{"error":"invalid argument --max: --format ascii exports the whole timeline; --max is for the context formats openai, anthropic and markdown"}"#,
        );
    }

    /// Import records survive a conversion to the other engine: importing again there adds nothing.
    #[test]
    fn import_records_survive_conversion() {
        let db = db();
        import(&db, "claude", "claude-conversations.json");
        let target = db.dir.path().join(match common::engine() {
            common::Engine::Json => "converted.sqlite",
            common::Engine::Sqlite => "converted.json",
        });
        db.tl(&["db", "convert", "--to", &target.display().to_string()]).json();
        let mut converted = Db::new();
        converted.path = target;
        let report = converted.tl(&["import", "--format", "claude", "--input", &fixture_str("claude-conversations.json")]).json();
        assert_eq!(report["imported"], 0);
        assert_eq!(report["skipped_conversations"][0]["reason"], "already imported into tl0");
        converted.tl(&["db", "check"]).json();
    }

    /// 2,000 messages in 20 conversations import in one transaction; the same file with its last
    /// conversation cut short imports nothing at all.
    #[test]
    fn two_thousand_messages_in_one_transaction() {
        let db = db();
        let conversations: Vec<Value> = (0..20)
            .map(|c| {
                let mut mapping = serde_json::Map::new();
                mapping.insert("root".into(), json!({"id": "root", "message": null, "parent": null, "children": ["m0"]}));
                for m in 0..100 {
                    let role = if m % 2 == 0 { "user" } else { "assistant" };
                    let parent = if m == 0 { "root".to_string() } else { format!("m{}", m - 1) };
                    let children = if m == 99 { json!([]) } else { json!([format!("m{}", m + 1)]) };
                    mapping.insert(format!("m{m}"), json!({"id": format!("m{m}"), "parent": parent, "children": children,
                        "message": {"id": format!("m{m}"), "author": {"role": role}, "create_time": 1700000000 + m,
                            "content": {"content_type": "text", "parts": [format!("message {m} of conversation {c} 🧪")]}}}));
                }
                json!({"id": format!("conv-{c}"), "title": format!("Conversation {c}"), "mapping": mapping, "current_node": "m99"})
            })
            .collect();
        let text = Value::Array(conversations).to_string();
        let cut = db.dir.path().join("cut.json");
        std::fs::write(&cut, &text[..text.len() - 200]).unwrap();
        let run = db.tl(&["import", "--format", "chatgpt", "--input", &cut.display().to_string()]);
        assert_eq!(run.code, 2, "{run:?}");
        assert!(run.stderr.contains("is truncated: it ends inside conversation 19"), "{run:?}");
        assert!(!db.path.exists());
        let whole = db.dir.path().join("whole.json");
        std::fs::write(&whole, &text).unwrap();
        let started = std::time::Instant::now();
        let report = db.tl(&["import", "--format", "chatgpt", "--input", &whole.display().to_string()]).json();
        let elapsed = started.elapsed();
        assert_eq!((report["imported"].clone(), report["messages"].clone()), (json!(20), json!(2000)));
        eprintln!(
            "{:?}: 2,000 messages imported in {elapsed:?} ({:.0} messages/s, debug build)",
            common::engine(),
            2000.0 / elapsed.as_secs_f64()
        );
        let info = db.tl(&["db", "info"]).json();
        assert_eq!((info["timelines"].clone(), info["nodes"].clone()), (json!(20), json!(2000)));
        db.tl(&["--timeline", "tl19", "context", "--node", "n100"]).json();
        if db.engine() == common::Engine::Json {
            // One transaction, one snapshot: the first write of a JSON database leaves no backup.
            assert!(!db.backup_path().exists());
        }
    }
}

/// A second database of the same engine in its own directory.
fn db_other() -> Db {
    db()
}
