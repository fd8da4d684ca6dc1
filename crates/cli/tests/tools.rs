//! `agentwire tools`: ids, cards, browse and parse-id.

use assert_cmd::Command;
use predicates::prelude::*;

fn agentwire() -> Command {
    Command::cargo_bin("agentwire").unwrap()
}

const TOOLS: &str = r#"{"tools": [
  {"name": "github.create_issue", "description": "Create an issue in a repository.",
   "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]},
   "_meta": {"version": "1.4.0"}},
  {"name": "slack_send_message", "description": "Send a message to a channel.",
   "inputSchema": {"type": "object",
                   "properties": {"channel": {"type": "string"}, "text": {"type": "string"}},
                   "required": ["channel", "text"]}},
  {"name": "read_file", "title": "Read file", "description": "Read a file from disk.",
   "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
   "annotations": {"readOnlyHint": true}}
]}"#;

fn one_line(s: &str) -> bool {
    s.lines().count() == 1
}

#[test]
fn ids_prints_one_json_line_per_tool() {
    agentwire()
        .args(["tools", "ids"])
        .write_stdin(TOOLS)
        .assert()
        .success()
        .stdout(concat!(
            r#"{"upstream_name":"github.create_issue","server":null,"tool_id":"github:create_issue@1.4.0","mcp_name":"github.create_issue.v1.4.0","namespace":"github","name":"create_issue","version":"1.4.0","hash8":null}"#,
            "\n",
            r#"{"upstream_name":"read_file","server":null,"tool_id":"mcp:read_file#85b56782","mcp_name":"mcp.read_file.h85b56782","namespace":"mcp","name":"read_file","version":null,"hash8":"85b56782"}"#,
            "\n",
            r#"{"upstream_name":"slack_send_message","server":null,"tool_id":"slack:slack_send_message#283a5dcf","mcp_name":"slack.slack_send_message.h283a5dcf","namespace":"slack","name":"slack_send_message","version":null,"hash8":"283a5dcf"}"#,
            "\n",
        ));
}

#[test]
fn ids_with_a_server_name_and_from_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tools.json");
    std::fs::write(&path, r#"[{"name": "search", "_meta": {"version": "2"}}]"#).unwrap();
    agentwire()
        .args(["tools", "ids", "--server", "GitHub"])
        .arg(&path)
        .assert()
        .success()
        .stdout(concat!(
            r#"{"upstream_name":"search","server":"GitHub","tool_id":"github:search@2","mcp_name":"github.search.v2","namespace":"github","name":"search","version":"2","hash8":null}"#,
            "\n"
        ));
}

#[test]
fn cards_prints_text_tokens_and_description() {
    agentwire()
        .args(["tools", "cards", "-"])
        .write_stdin(TOOLS)
        .assert()
        .success()
        .stdout(concat!(
            r#"{"id":"github:create_issue@1.4.0","text":"github:create_issue@1.4.0 (tool) — Create an issue in a repository. side-effects\n","tokens":23,"description":"Create an issue in a repository."}"#,
            "\n",
            r#"{"id":"mcp:read_file#85b56782","text":"mcp:read_file#85b56782 (tool: Read file) — Read a file from disk. [read-only]\n","tokens":27,"description":"Read a file from disk."}"#,
            "\n",
            r#"{"id":"slack:slack_send_message#283a5dcf","text":"slack:slack_send_message#283a5dcf (tool) — Send a message to a channel. side-effects\n","tokens":25,"description":"Send a message to a channel."}"#,
            "\n",
        ));
}

#[test]
fn browse_prints_exactly_what_the_agent_receives() {
    agentwire()
        .args(["tools", "browse", "--query", "read a file"])
        .write_stdin(TOOLS)
        .assert()
        .success()
        .stdout(concat!(
            "tool_browse: 1 tool, best match first\n",
            "mcp:read_file#85b56782 (tool: Read file) — Read a file from disk. [read-only]\n",
        ));
    agentwire()
        .args(["tools", "browse", "--path", "/"])
        .write_stdin(TOOLS)
        .assert()
        .success()
        .stdout(concat!(
            "tool_browse: 3 entries, internal entries are paths to browse\n",
            "/github (internal) — 1 tool: create_issue\n",
            "/mcp (internal) — 1 tool: read_file\n",
            "/slack (internal) — 1 tool: slack_send_message\n",
        ));
    agentwire()
        .args(["tools", "browse", "--path", "/github/create_issue"])
        .write_stdin(TOOLS)
        .assert()
        .success()
        .stdout(concat!(
            "tool_browse: 1 entry, internal entries are paths to browse\n",
            "github:create_issue@1.4.0 (tool) — Create an issue in a repository. side-effects\n",
        ));
}

#[test]
fn browse_query_with_top_k() {
    agentwire()
        .args([
            "tools",
            "browse",
            "--query",
            "send message or create issue",
            "--top-k",
            "1",
        ])
        .write_stdin(TOOLS)
        .assert()
        .success()
        .stdout(predicate::function(|s: &str| s.lines().count() == 2));
}

#[test]
fn parse_id_prints_the_parts() {
    agentwire()
        .args(["tools", "parse-id", "github:create_issue@1.4.0"])
        .assert()
        .success()
        .stdout(
            r#"{"namespace":"github","name":"create_issue","version":"1.4.0","hash8":null,"tool_id":"github:create_issue@1.4.0","mcp_name":"github.create_issue.v1.4.0"}"#
                .to_owned()
                + "\n",
        );
    for id in ["a:b@1#0123abcd", "a.b.h0123abcd.v1", "a%3Ab%401%230123abcd"] {
        agentwire()
            .args(["tools", "parse-id", id])
            .assert()
            .success()
            .stdout(
                r#"{"namespace":"a","name":"b","version":"1","hash8":"0123abcd","tool_id":"a:b@1#0123abcd","mcp_name":"a.b.h0123abcd.v1"}"#
                    .to_owned()
                    + "\n",
            );
    }
}

#[test]
fn a_bad_id_is_a_one_line_error_with_status_1() {
    agentwire()
        .args(["tools", "parse-id", "GitHub:create_issue"])
        .assert()
        .code(1)
        .stdout("")
        .stderr(
            "agentwire: CATALOG_ERROR: invalid tool_id \"GitHub:create_issue\": the namespace \
             must match [a-z][a-z0-9_-]{0,63} (at byte 0)\n",
        );
}

#[test]
fn browse_errors_carry_their_spec_code() {
    agentwire()
        .args(["tools", "browse", "--path", "/github/"])
        .write_stdin(TOOLS)
        .assert()
        .code(1)
        .stdout("")
        .stderr(
            "agentwire: PATH_INVALID: invalid path \"/github/\": a trailing `/` is not allowed \
             at byte 7\n",
        );
    agentwire()
        .args(["tools", "browse", "--path", "/gitlab"])
        .write_stdin(TOOLS)
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with("agentwire: PATH_NOT_FOUND: "))
        .stderr(predicate::function(one_line));
    agentwire()
        .args(["tools", "browse", "--query", "the of"])
        .write_stdin(TOOLS)
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with("agentwire: ARGS_INVALID: "));
}

#[test]
fn bad_input_is_a_one_line_error_with_status_1() {
    agentwire()
        .args(["tools", "ids"])
        .write_stdin("{\"tools\": [\n  {\"name\": }\n]}")
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::starts_with(
            "agentwire: standard input: CATALOG_ERROR at line 2, column 12: invalid JSON:",
        ))
        .stderr(predicate::function(one_line));
    agentwire()
        .args(["tools", "ids"])
        .write_stdin(r#"{"tool": []}"#)
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with(
            "agentwire: standard input: CATALOG_ERROR: invalid tool at : expected a tools/list result",
        ));
    agentwire()
        .args(["tools", "ids", "/nonexistent/tools.json"])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with(
            "agentwire: cannot read /nonexistent/tools.json",
        ));
    agentwire()
        .args(["tools", "ids"])
        .write_stdin(&b"[\xff]"[..])
        .assert()
        .code(1)
        .stderr("agentwire: standard input is not valid UTF-8 (invalid byte at offset 1)\n");
}

/// One invalid name, one over-budget card or one duplicate used to fail the whole catalog,
/// so `tools ids` printed no id at all: now every other id is printed, the skipped tools
/// are reported on standard error, and the status is 0 (1 with --strict).
#[test]
fn a_tool_the_catalog_cannot_take_is_skipped_and_reported() {
    let over_budget = format!("ok.{}", "_1".repeat(63));
    let tools = format!(
        r#"{{"tools": [{{"name": "ok.tool", "_meta": {{"version": "1"}}}}, {{"name": "bad tool"}},
            {{"name": "{over_budget}", "annotations": {{"openWorldHint": true, "destructiveHint": true, "idempotentHint": true}}}},
            {{"name": "ok.tool", "_meta": {{"version": "1"}}}}]}}"#
    );
    let output = agentwire()
        .args(["tools", "ids"])
        .write_stdin(tools.as_str())
        .assert()
        .success()
        .get_output()
        .clone();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1);
    assert!(stdout.contains(r#""tool_id":"ok:tool@1""#));
    let stderr = String::from_utf8(output.stderr).unwrap();
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{stderr}");
    assert!(lines[0].starts_with(
        r#"agentwire: skipped "bad tool" (/tools/1): CATALOG_ERROR: invalid tool at /tools/1/name:"#
    ));
    assert!(
        lines[1].contains("(/tools/2): CATALOG_ERROR: card ok:_1_1"),
        "{}",
        lines[1]
    );
    assert!(lines[1].contains("over the hard cap of 80"));
    assert!(lines[2].starts_with(
        r#"agentwire: skipped "ok.tool" (/tools/3): CATALOG_ERROR: tool_id collision"#
    ));
    // JSON reports, one per line, with the §3.4 error inside.
    let output = agentwire()
        .args(["tools", "--json", "ids"])
        .write_stdin(tools.as_str())
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8(output.stderr).unwrap();
    for line in stderr.lines() {
        let report: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(report["skipped"]["error"]["error"], "CATALOG_ERROR");
    }
    assert_eq!(stderr.lines().count(), 3);
    // --strict: the same output, then status 1.
    agentwire()
        .args(["tools", "ids", "--strict"])
        .write_stdin(tools.as_str())
        .assert()
        .code(1)
        .stdout(predicate::str::contains("ok:tool@1"))
        .stderr(predicate::str::ends_with(
            "agentwire: --strict: 3 tools were skipped\n",
        ));
}

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

const FS: &str = r#"{"tools": [{"name": "read_file", "description": "Read a file.",
  "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
  "annotations": {"readOnlyHint": true}}]}"#;
const WEB: &str = r#"[{"name": "fetch", "description": "Fetch a web page.",
  "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}}]"#;

#[test]
fn several_servers_each_with_its_namespace() {
    let dir = tempfile::tempdir().unwrap();
    let fs = write(&dir, "fs.json", FS);
    let web = write(&dir, "web.json", WEB);
    let fs_arg = format!("fs={}", fs.display());
    let web_arg = format!("web={}", web.display());
    agentwire()
        .args([
            "tools", "browse", "--path", "/", "--server", &fs_arg, "--server", &web_arg,
        ])
        .assert()
        .success()
        .stdout(concat!(
            "tool_browse: 2 entries, internal entries are paths to browse\n",
            "/fs (internal) — 1 tool: read_file\n",
            "/web (internal) — 1 tool: fetch\n",
        ));
    // Standard input as a third server, named by a bare --server.
    agentwire()
        .args(["tools", "ids", "--server", &fs_arg, "--server", "gh"])
        .write_stdin(r#"[{"name": "search", "_meta": {"version": "2"}}]"#)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            r#""tool_id":"fs:read_file#85b56782""#,
        ))
        .stdout(predicate::str::contains(r#""tool_id":"gh:search@2""#));
    // The proxy's stripped tools/list, names safe for strict MCP clients.
    agentwire()
        .args(["tools", "discovery", "--server", &fs_arg, "--server", &web_arg])
        .assert()
        .success()
        .stdout(concat!(
            r#"{"tools":[{"name":"fs.read_file.h85b56782","description":"Read a file.","inputSchema":{"type":"object"}},"#,
            r#"{"name":"web.fetch.h61e15490","description":"Fetch a web page.","inputSchema":{"type":"object"}}]}"#,
            "\n"
        ));
    for args in [
        vec!["tools", "ids", "--server", "a=-", "--server", "b=-"],
        vec!["tools", "ids", "--server", "a", "--server", "b"],
        vec!["tools", "ids", "--server", "=x.json"],
    ] {
        agentwire().args(&args).write_stdin("[]").assert().code(2);
    }
}

#[test]
fn hydrate_and_validate() {
    let dir = tempfile::tempdir().unwrap();
    let fs = write(&dir, "fs.json", FS);
    let fs_arg = format!("fs={}", fs.display());
    for name in ["fs:read_file#85b56782", "fs.read_file.h85b56782"] {
        agentwire()
            .args(["tools", "hydrate", name, "--server", &fs_arg])
            .assert()
            .success()
            .stdout(concat!(
                r#"{"tool_id":"fs:read_file#85b56782","upstream_name":"read_file","server":"fs","input_schema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}"#,
                "\n"
            ));
    }
    for (json, out) in [(None, "ok\n"), (Some("--json"), "{\"ok\":true}\n")] {
        agentwire()
            .args(["tools"])
            .args(json)
            .args([
                "validate",
                "fs:read_file#85b56782",
                "--args",
                r#"{"path": "/tmp"}"#,
            ])
            .args(["--server", &fs_arg])
            .assert()
            .success()
            .stdout(out);
    }
    agentwire()
        .args(["tools", "validate", "fs:read_file#85b56782", "--server", &fs_arg])
        .assert()
        .code(1)
        .stdout("")
        .stderr("agentwire: ARGS_INVALID: arguments do not match the input schema of fs:read_file#85b56782: \"path\" is a required property\n");
    agentwire()
        .args(["tools", "--json", "validate", "fs:read_file#85b56782", "--args", r#"{"path": 1}"#, "--server", &fs_arg])
        .assert()
        .code(1)
        .stdout("")
        .stderr(concat!(
            r#"{"error":"ARGS_INVALID","message":"arguments do not match the input schema of fs:read_file#85b56782: /path: 1 is not of type \"string\"","path":"","details":{"violations":[{"instance_path":"/path","schema_path":"/properties/path/type","message":"1 is not of type \"string\""}]}}"#,
            "\n"
        ));
    agentwire()
        .args([
            "tools",
            "--json",
            "hydrate",
            "fs:nope#00000000",
            "--server",
            &fs_arg,
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with(r#"{"error":"HYDRATE_FAILED","#));
}

#[test]
fn json_errors_have_the_spec_shape() {
    agentwire()
        .args(["tools", "--json", "browse", "--path", "/github/"])
        .write_stdin(TOOLS)
        .assert()
        .code(1)
        .stdout("")
        .stderr(concat!(
            r#"{"error":"PATH_INVALID","message":"invalid path \"/github/\": a trailing `/` is not allowed at byte 7","path":"/github/","details":{"offset":7}}"#,
            "\n"
        ));
    agentwire()
        .args(["tools", "browse", "--json", "--path", "/gitlab"])
        .write_stdin(TOOLS)
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with(r#"{"error":"PATH_NOT_FOUND","#));
    agentwire()
        .args(["tools", "--json", "ids"])
        .write_stdin("{\"tools\": [\n")
        .assert()
        .code(1)
        .stderr(concat!(
            r#"{"error":"CATALOG_ERROR","message":"invalid JSON: EOF while parsing a list","path":"","details":{"line":2,"column":1,"input":"standard input"}}"#,
            "\n"
        ));
    agentwire()
        .args(["tools", "--json", "ids", "/nonexistent/tools.json"])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with(
            r#"{"error":"READ_FAILED","message":"cannot read /nonexistent/tools.json"#,
        ));
}

#[test]
fn browse_json_and_paging() {
    agentwire()
        .args(["tools", "browse", "--json", "--path", "/", "--top-k", "2"])
        .write_stdin(TOOLS)
        .assert()
        .success()
        .stdout(predicate::str::starts_with(r#"{"cards":[{"id":"/github","#))
        .stdout(predicate::str::ends_with(
            "\"total\":3,\"next_cursor\":\"2\"}\n",
        ));
    agentwire()
        .args([
            "tools", "browse", "--path", "/", "--top-k", "2", "--cursor", "2",
        ])
        .write_stdin(TOOLS)
        .assert()
        .success()
        .stdout(concat!(
            "tool_browse: entries 3-3 of 3, internal entries are paths to browse\n",
            "/slack (internal) — 1 tool: slack_send_message\n",
        ));
    agentwire()
        .args(["tools", "browse", "--query", "x", "--cursor", "2"])
        .write_stdin(TOOLS)
        .assert()
        .code(2);
}

#[test]
fn usage_errors_exit_with_2() {
    // Neither --query nor --path, both, --top-k with --path, --top-k out of range.
    for args in [
        vec!["tools", "browse"],
        vec!["tools", "browse", "--query", "x", "--path", "/"],
        vec!["tools", "browse", "--query", "x", "--top-k", "0"],
        vec!["tools", "browse", "--query", "x", "--top-k", "51"],
        vec!["tools", "parse-id"],
        vec!["tools"],
        vec!["tools", "frobnicate"],
    ] {
        agentwire()
            .args(&args)
            .write_stdin(TOOLS)
            .assert()
            .code(2)
            .stdout("");
    }
}

#[test]
fn help_lists_the_subcommands() {
    agentwire()
        .args(["tools", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("ids"))
        .stdout(predicate::str::contains("cards"))
        .stdout(predicate::str::contains("browse"))
        .stdout(predicate::str::contains("parse-id"))
        .stdout(predicate::str::contains("hydrate"))
        .stdout(predicate::str::contains("validate"))
        .stdout(predicate::str::contains("discovery"));
}
