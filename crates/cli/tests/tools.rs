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
            r#"{"upstream_name":"github.create_issue","tool_id":"github:create_issue@1.4.0","namespace":"github","name":"create_issue","version":"1.4.0","hash8":null}"#,
            "\n",
            r#"{"upstream_name":"read_file","tool_id":"mcp:read_file#85b56782","namespace":"mcp","name":"read_file","version":null,"hash8":"85b56782"}"#,
            "\n",
            r#"{"upstream_name":"slack_send_message","tool_id":"slack:slack_send_message#283a5dcf","namespace":"slack","name":"slack_send_message","version":null,"hash8":"283a5dcf"}"#,
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
            r#"{"upstream_name":"search","tool_id":"github:search@2","namespace":"github","name":"search","version":"2","hash8":null}"#,
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
            r#"{"namespace":"github","name":"create_issue","version":"1.4.0","hash8":null}"#
                .to_owned()
                + "\n",
        );
    agentwire()
        .args(["tools", "parse-id", "a:b@1#0123abcd"])
        .assert()
        .success()
        .stdout(
            r#"{"namespace":"a","name":"b","version":"1","hash8":"0123abcd"}"#.to_owned() + "\n",
        );
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
            "agentwire: CATALOG_ERROR: invalid JSON at line 2, column 12:",
        ))
        .stderr(predicate::function(one_line));
    agentwire()
        .args(["tools", "cards"])
        .write_stdin(r#"{"tools": [{"name": "ok.tool"}, {"name": "bad tool"}]}"#)
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with(
            "agentwire: CATALOG_ERROR: invalid tool at /tools/1/name:",
        ));
    agentwire()
        .args(["tools", "ids"])
        .write_stdin(r#"[{"name": "fs.read"}, {"name": "fs.read"}]"#)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("tool_id collision"));
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

#[test]
fn usage_errors_exit_with_2() {
    // Neither --query nor --path, both, --top-k with --path, --top-k out of range.
    for args in [
        vec!["tools", "browse"],
        vec!["tools", "browse", "--query", "x", "--path", "/"],
        vec!["tools", "browse", "--path", "/", "--top-k", "3"],
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
        .stdout(predicate::str::contains("parse-id"));
}
