#!/usr/bin/env python3
"""Generates the cross-check fixtures of conformance/toolcard from Python itself.

The values that must agree across implementations are computed here by CPython, not by the
Rust crate: the canonical shape and hash8 (spec §1.3, with the spec's own code, verbatim),
the description truncation of spec §2.4 (the reference implementation's algorithm) and the
cl100k_base token counts (OpenAI's `tiktoken`).

    TIKTOKEN_CACHE_DIR=... python3 conformance/toolcard/tools/generate.py

tiktoken downloads cl100k_base on first use; offline, copy `assets/cl100k_base.tiktoken`
from the tiktoken-rs crate to `$TIKTOKEN_CACHE_DIR/9b5ad71b2ce5302211f9c61530b329a4922fc6a4`.
Re-running rewrites the generated files (`derive-id/py_*`, `truncate/py_*`, `card/py_*`)
and nothing else.
"""

import hashlib
import json
import os
import re
import sys

import tiktoken

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
ENC = tiktoken.get_encoding("cl100k_base")


def count(text):
    return len(ENC.encode_ordinary(text))


# --- spec §1.3, verbatim --------------------------------------------------------------------

def _canonical_shape(input_schema):
    props = sorted((input_schema.get("properties") or {}).keys())
    required = sorted(input_schema.get("required") or [])
    return json.dumps(
        {"properties": props, "required": required},
        sort_keys=True,
        separators=(",", ":"),
    )


def _hash8(upstream_name, input_schema):
    canonical = upstream_name + "\n" + _canonical_shape(input_schema)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:8]


# --- spec §1.4 namespace inference, as the Rust crate documents it --------------------------

def infer(name):
    seps = [c for c in name if c in "./"][:1]
    if seps:
        first = seps[0]
        for sep in (first, "/" if first == "." else "."):
            i = name.find(sep)
            if i > 0:
                rest = name[i + 1:]
                return name[:i].lower(), (rest if rest else name)
    parts = name.split("_")
    if len(parts) >= 3 and parts[0]:
        return parts[0].lower(), name
    return "mcp", name


# spec §1.1, with §1.2's rule that a hash is required when there is no version
TOOL_ID = re.compile(
    r"[a-z][a-z0-9_-]{0,63}:[A-Za-z_][A-Za-z0-9_.-]{0,127}"
    r"(?:@[A-Za-z0-9._-]{1,32}(?:#[0-9a-f]{8})?|#[0-9a-f]{8})"
)


def tool_id(tool):
    ns, name = infer(tool["name"])
    version = (tool.get("_meta") or {}).get("version")
    if version:
        return f"{ns}:{name}@{version}", None
    schema = tool.get("inputSchema") or {}
    return f"{ns}:{name}#{_hash8(tool['name'], schema)}", _canonical_shape(schema)


# --- spec §2.4, the reference implementation's algorithm ------------------------------------

_BOUNDARY = re.compile(r"[.!?](?:\s|$)")


def truncate(text, max_tokens):
    if max_tokens <= 0:
        return ""
    if count(text) <= max_tokens:
        return text
    for m in reversed(list(_BOUNDARY.finditer(text))):
        candidate = text[: m.end()].rstrip()
        if count(candidate) <= max_tokens:
            return candidate
    lo, hi, best = 0, len(text), 0
    while lo <= hi:
        mid = (lo + hi) // 2
        if count(text[:mid]) <= max_tokens - 1:
            best = mid
            lo = mid + 1
        else:
            hi = mid - 1
    return text[:best].rstrip() + "\u2026"


# --- the card rendering, as the Rust crate documents it -------------------------------------

def render(card, description, force_sep=False):
    line = card["id"] + " (" + card["kind"]
    if card["name"] != card["default_name"]:
        line += ": " + card["name"]
    line += ")"
    if description or force_sep:
        line += " \u2014 " + description
    if card["tags"]:
        line += " [" + ", ".join(card["tags"]) + "]"
    if card["cost_hint"] > 0:
        c = card["cost_hint"]
        line += " cost=" + (str(int(c)) if c == int(c) else repr(c))
    if card["side_effects"]:
        line += " side-effects"
    return line + "\n"


def tool_card(tool):
    tid, _ = tool_id(tool)
    ns = tid.split(":", 1)[0]
    short = re.split("[@#]", tid.split(":", 1)[1])[0]
    default = short if len(short) <= 64 else short[:63] + "\u2026"
    ann = tool.get("annotations") or {}
    title = tool.get("title") or ann.get("title")
    name = " ".join(title.split()) if title else default
    if len(name) > 64:
        name = name[:63] + "\u2026"
    read_only = ann.get("readOnlyHint") is True
    tags = []
    if read_only:
        tags.append("read-only")
    else:
        if ann.get("destructiveHint") is True:
            tags.append("destructive")
        if ann.get("idempotentHint") is True:
            tags.append("idempotent")
    if ann.get("openWorldHint") is True:
        tags.append("open-world")
    card = {
        "id": tid, "name": name, "default_name": default, "kind": "tool",
        "description": " ".join((tool.get("description") or "").split()),
        "tags": sorted(set(tags)), "namespace": ns,
        "has_schema": tool.get("inputSchema") is not None,
        "cost_hint": float(ann.get("costHint") or 0), "side_effects": not read_only,
    }
    text = render(card, card["description"])
    if count(text) > 60 and card["description"]:
        overhead = count(render(card, "", True))
        budget = max(60 - overhead, 1)
        card["description"] = truncate(card["description"], budget)
        text = render(card, card["description"])
    card["text"] = text
    card["tokens"] = count(text)
    return card


# --- fixture writing ------------------------------------------------------------------------

def write(area, name, fixture):
    folder = os.path.join(ROOT, area)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name + ".json"), "w", encoding="utf-8") as f:
        json.dump(fixture, f, ensure_ascii=False, indent=2)
        f.write("\n")


def clean(area):
    folder = os.path.join(ROOT, area)
    if os.path.isdir(folder):
        for entry in os.listdir(folder):
            if entry.startswith("py_"):
                os.remove(os.path.join(folder, entry))


DERIVE = [
    ("spec_github", "spec §1.4 row 1", {"name": "github.create_issue", "_meta": {"version": "1.4.0"},
        "inputSchema": {"type": "object", "properties": {"repo": {}, "title": {}}, "required": ["repo", "title"]}}),
    ("spec_slack_realistic", "spec §1.4 row 2 with a realistic schema (the spec's 3a91c7d2 is illustrative)",
        {"name": "slack_send_message", "inputSchema": {"type": "object",
            "properties": {"channel": {"type": "string"}, "text": {"type": "string"}}, "required": ["channel", "text"]}}),
    ("spec_slack_empty", "spec §1.4 row 2 with no schema", {"name": "slack_send_message"}),
    ("spec_read_file_realistic", "spec §1.4 row 3 with a realistic schema (the spec's 7b2f0e14 is illustrative)",
        {"name": "read_file", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}),
    ("spec_read_file_empty", "spec §1.4 row 3 with no schema", {"name": "read_file"}),
    ("spec_weather", "spec §1.4 row 4", {"name": "weather.get", "_meta": {"version": "2024-05"}}),
    ("github_vs_gitlab_a", "§1.3: same shape, different upstream prefix, different hash",
        {"name": "github.create_issue", "inputSchema": {"properties": {"title": {}}, "required": ["title"]}}),
    ("github_vs_gitlab_b", "§1.3: same shape, different upstream prefix, different hash",
        {"name": "gitlab.create_issue", "inputSchema": {"properties": {"title": {}}, "required": ["title"]}}),
    ("types_ignored", "§1.3: types and descriptions are not in the shape",
        {"name": "read_file", "inputSchema": {"type": "object", "description": "x",
            "properties": {"path": {"type": "integer", "description": "changed"}}, "required": ["path"],
            "additionalProperties": False, "$schema": "https://json-schema.org/draft/2020-12/schema"}}),
    ("prefixed_hash_input", "the hash covers the upstream name with its prefix",
        {"name": "fs.read_text_file", "inputSchema": {"type": "object", "properties": {"path": {}, "head": {}, "tail": {}}, "required": ["path"]}}),
    ("non_ascii_properties", "non-ASCII property names are escaped as lower-case \\uXXXX",
        {"name": "geo.lookup", "inputSchema": {"properties": {"zürich": {}, "Ä": {}, "ascii": {}, "日本": {}}, "required": ["日本"]}}),
    ("astral_properties", "astral characters are escaped as surrogate pairs",
        {"name": "emoji.react", "inputSchema": {"properties": {"😀": {}, "𝒳": {}, "a": {}}, "required": ["😀"]}}),
    ("escapes_in_properties", "quotes, backslashes, control characters and DEL",
        {"name": "odd.names", "inputSchema": {"properties": {"a\"b": {}, "back\\slash": {}, "tab\there": {}, "nl\nx": {}, "\u0001": {}, "\u007f": {}, "\u00a0": {}}}}),
    ("code_point_order", "keys sort by code point: upper case before lower case, ASCII before the rest",
        {"name": "sort.check", "inputSchema": {"properties": {"b": {}, "B": {}, "a": {}, "_": {}, "é": {}, "Z": {}, "0": {}, "~": {}, "\uffff": {}, "😀": {}}}}),
    ("required_not_in_properties", "required names need not be properties",
        {"name": "loose.schema", "inputSchema": {"properties": {"x": {}}, "required": ["y", "x"]}}),
    ("required_numbers", "numbers in required sort numerically and print like Python (int, float repr, bool)",
        {"name": "weird.required", "inputSchema": {"required": [10, 2.5, True, 0, 1e16, 1.0, 0.00001, -3]}}),
    ("required_string", "a string as required is iterated as its characters, as Python does",
        {"name": "weird.string", "inputSchema": {"required": "cab"}}),
    ("required_single_object", "a single non-string element needs no comparison",
        {"name": "weird.object", "inputSchema": {"required": [{"b": [1.5, None], "a": "é"}]}}),
    ("falsy_members", "null, empty and false-y properties and required count as empty",
        {"name": "empty.members", "inputSchema": {"properties": None, "required": []}}),
    ("falsy_properties_list", "an empty list as properties is false-y, hence empty",
        {"name": "empty.list", "inputSchema": {"properties": [], "required": ""}}),
    ("underscore_namespace", "underscore rule: three parts, the prefix kept in the name",
        {"name": "jira_create_ticket_now", "inputSchema": {"properties": {"summary": {}}}}),
    ("two_underscore_parts", "two parts: the mcp fallback", {"name": "write_file"}),
    ("claude_code_style", "mcp__server__tool: empty parts, mcp fallback", {"name": "mcp__server__tool"}),
    ("leading_underscore", "an empty first underscore part: mcp fallback", {"name": "_private_tool_x"}),
    ("dotted_rest", "split at the first dot only", {"name": "a.b.c"}),
    ("trailing_dot", "an empty right side keeps the whole name", {"name": "trailing."}),
    ("slash_then_dot", "the first separator wins", {"name": "svc/v2.list"}),
    ("uppercase_namespace", "namespaces are lower-cased; the hash uses the raw name", {"name": "GitHub.search"}),
    ("leading_dot", "an empty prefix falls through to the mcp fallback, and `.hidden` is no name", {"name": ".hidden"}),
    ("version_int", "an integer version is formatted as Python's str()", {"name": "svc.op", "_meta": {"version": 2}}),
    ("version_false_y", "a false-y version means no version", {"name": "svc.op", "_meta": {"version": ""}}),
]

TRUNCATE_TEXTS = [
    ("sentences", "Hello world. This is e.g. a test. And then it goes on for much longer than that, with more words."),
    ("version_numbers", "v1.2.3 is the version of this package today and it is quite stable overall"),
    ("no_boundary", "Searches the issue tracker for tickets matching every given filter including labels assignees milestones and free text"),
    ("exclaim_question", "Deletes everything! Are you sure? It cannot be undone, not even by an administrator with full rights."),
    ("newline_boundary", "Line one is here.\nLine two follows with more words than the budget allows for sure."),
    ("cjk", "日本語のテキストを読み込みます。ファイルの内容を返します。長い説明がここに続きます。"),
    ("emoji", "Reacts with 😀😀😀 to a message. Supports 👍🏽 skin tones and 🇵🇹 flags in every channel."),
    ("ellipsis_not_terminator", "Loads data… then processes it… and finally stores everything in the warehouse tables"),
    ("trailing_spaces", "First sentence.     Second sentence is long enough to need cutting right here now."),
    ("dot_no_space", "Uses dot.notation.paths everywhere without any sentence break at all in this text"),
    ("long_word", "A" * 300),
    ("mixed", "Get the weather. Forecasts: hourly, daily! Alerts? Yes — severe ones only, e.g. storms."),
]

CARDS = [
    ("plain", {"name": "read_file", "description": "Read a file from disk.",
        "inputSchema": {"type": "object", "properties": {"path": {}}, "required": ["path"]}}),
    ("read_only", {"name": "fs.list_directory", "description": "List a directory.",
        "annotations": {"readOnlyHint": True, "openWorldHint": False}, "inputSchema": {"type": "object"}}),
    ("destructive_idempotent", {"name": "db.drop_table", "title": "Drop table",
        "description": "Drop a table.\n\nThis cannot be undone.",
        "annotations": {"destructiveHint": True, "idempotentHint": True, "openWorldHint": True, "costHint": 0.5},
        "inputSchema": {"type": "object"}}),
    ("no_schema", {"name": "ping", "description": ""}),
    ("long_description", {"name": "github.search_issues", "_meta": {"version": "3"},
        "description": "Search issues and pull requests across all of GitHub. " * 6 + "Results are paginated.",
        "inputSchema": {"type": "object"}}),
    ("long_unbroken", {"name": "svc.op", "_meta": {"version": "1"},
        "description": "word " * 120, "annotations": {"readOnlyHint": True}}),
    ("long_title", {"name": "svc.titled", "_meta": {"version": "1"},
        "title": "A very long human readable title that keeps going well beyond sixty-four characters",
        "description": "Short."}),
    ("cost_integer", {"name": "svc.costly", "_meta": {"version": "1"}, "description": "Costs.",
        "annotations": {"costHint": 2, "readOnlyHint": True}}),
    ("annotation_title", {"name": "weather.get", "_meta": {"version": "2024-05"},
        "annotations": {"title": "Get weather", "readOnlyHint": True}, "description": "Current weather for a city."}),
    ("multilingual", {"name": "i18n.translate", "_meta": {"version": "1"},
        "description": "Übersetzt Texte zwischen Sprachen. 日本語にも対応しています。 Поддерживает русский язык. " * 3}),
]


def main():
    for area in ("derive-id", "truncate", "card"):
        clean(area)
    for i, (name, description, tool) in enumerate(DERIVE, 1):
        tid, shape = tool_id(tool)
        fixture = {
            "name": name, "description": description + " (generated by CPython)",
            "operation": "derive-id", "input": tool,
        }
        if TOOL_ID.fullmatch(tid):
            fixture["expected"] = {"tool_id": tid, "canonical_shape": shape}
        else:
            fixture["expectedError"] = {"error": "CATALOG_ERROR"}
        write("derive-id", f"py_{i:03}_{name}", fixture)
    n = 0
    for name, text in TRUNCATE_TEXTS:
        for budget in (1, 3, 8, 15, 30):
            n += 1
            write("truncate", f"py_{n:03}_{name}_{budget}", {
                "name": f"{name}_{budget}", "description": f"§2.4 with budget {budget} (generated by CPython and tiktoken)",
                "operation": "truncate", "input": text, "budget": budget, "expected": truncate(text, budget),
            })
    for i, (name, tool) in enumerate(CARDS, 1):
        card = tool_card(tool)
        json_form = {k: card[k] for k in ("id", "name", "description", "tags", "kind", "namespace",
                                          "has_schema", "cost_hint", "side_effects")}
        write("card", f"py_{i:03}_{name}", {
            "name": name, "description": "card rendering and cl100k_base count (generated by CPython and tiktoken)",
            "operation": "card", "input": tool,
            "expected": {"text": card["text"], "tokens": card["tokens"], "json": json_form},
        })


if __name__ == "__main__":
    sys.exit(main())
