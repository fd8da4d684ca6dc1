#!/usr/bin/env python3
"""Writes conformance/gcx1/gortex/1NN_bench_*.json: twenty responses in the shapes of the
twenty cases of Gortex's wire-format benchmark (bench/wire-format/cases, one per tool of its
scorecard), each with the payload Gortex's benchmark encoder writes for it.

The case files themselves could not be fetched; the responses here are written from the
case list (tool, shape, size) in the research notes, with made-up but realistic symbols.
The payloads follow the benchmark's `encodeAsGCX` rules exactly (docs/gcx1.md, "Gortex's
benchmark encoder"): `results` rows with `total`/`truncated`, `symbols` rows with
`total`/`etag`, `nodes`+`edges` sections with the node totals, `edges` rows with
`total_edges`/`truncated`, `implementations` rows with `total`, one section per key for an
object of arrays, else gcx-go's `EncodeAny`; rows are the sorted union of keys with
`rows=N`, cells the JSON lexemes, nested values Go's compact JSON (sorted keys, HTML
escapes), every line row-escaped.

Each fixture is a `decode-any` case: the payload must read back as the response. The
`agentwire` integration test `gcx1_gortex_bench` also encodes each response with
`--tool` and compares token counts with these payloads.

Run from the repository root: python3 conformance/gcx1/tools/gortex_bench.py
"""
import json
import os

OUT = os.path.join(os.path.dirname(__file__), "..", "gortex")


def go_json(value):
    text = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    for a, b in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                 ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(a, b)
    return text


def escape(text):
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "")


def cell(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, str):
        return value
    return go_json(value)


def header(tool, fields, meta):
    parts = ["GCX1", "tool=" + escape(tool), "fields=" + ",".join(escape(f) for f in fields)]
    for key in sorted(meta):
        parts.append(escape(key) + "=" + escape(meta[key]))
    return " ".join(parts) + "\n"


def flat_rows(tool, items, meta):
    fields = sorted({k for item in items for k in item})
    meta = dict(meta, rows=str(len(items)))
    text = header(tool, fields, meta)
    for item in items:
        text += "\t".join(escape(cell(item.get(f))) for f in fields) + "\n"
    return text


def encode_any(tool, value):
    """gcx-go v0.1.0 EncodeAny."""
    if isinstance(value, dict):
        fields = sorted(value)
        return header(tool, fields, {}) + "\t".join(escape(cell(value[f])) for f in fields) + "\n"
    if isinstance(value, list):
        if not value:
            return header(tool, ["value"], {"rows": "0"})
        if all(isinstance(v, dict) for v in value):
            return flat_rows(tool, value, {})
        text = header(tool, ["value"], {"rows": str(len(value))})
        return text + "".join(escape(cell(v)) + "\n" for v in value)
    return header(tool, ["value"], {}) + escape(cell(value)) + "\n"


def meta_of(obj, keys):
    return {k: cell(obj[k]) for k in keys if k in obj}


def bench_encode(tool, value):
    """The benchmark harness's encodeAsGCX."""
    if isinstance(value, dict):
        if isinstance(value.get("results"), list):
            return flat_rows(tool, value["results"], meta_of(value, ["total", "truncated"]))
        if isinstance(value.get("symbols"), list):
            return flat_rows(tool, value["symbols"], meta_of(value, ["total", "etag"]))
        if isinstance(value.get("nodes"), list):
            text = flat_rows(tool + ".nodes", value["nodes"],
                             meta_of(value, ["total_nodes", "total_edges", "truncated"]))
            edges = value.get("edges") or []
            if edges:
                return text + flat_rows(tool + ".edges", edges, {})
            return text + header(tool + ".edges", ["value"], {"rows": "0"})
        if isinstance(value.get("edges"), list):
            return flat_rows(tool, value["edges"], meta_of(value, ["total_edges", "truncated"]))
        if isinstance(value.get("implementations"), list):
            return flat_rows(tool, value["implementations"], meta_of(value, ["total"]))
        if len(value) >= 2 and all(isinstance(v, list) for v in value.values()):
            text = ""
            for key in sorted(value):
                items = value[key]
                name = tool + "." + key
                if not items:
                    text += header(name, ["value"], {"rows": "0"})
                elif isinstance(items[0], dict):
                    text += flat_rows(name, items, {})
                else:
                    text += header(name, ["value"], {"rows": str(len(items))})
                    text += "".join(escape(cell(v)) + "\n" for v in items)
            return text
    return encode_any(tool, value)


# ---------------------------------------------------------------------------------------
# The responses

PKGS = ["internal/auth", "internal/store", "internal/httpapi", "internal/queue", "pkg/config",
        "internal/billing", "cmd/server", "internal/search"]
NAMES = ["ParseToken", "Open", "Close", "HandleOrder", "Publish", "Load", "Validate", "Refresh",
         "NewServer", "Start", "Stop", "Lookup", "Index", "Render", "Retry", "Flush", "Encode",
         "Decode", "Register", "Resolve", "Charge", "Refund", "Subscribe", "Dispatch", "Scan",
         "Merge", "Apply", "Commit", "Rollback", "Snapshot"]
KINDS = ["function", "method", "type", "interface"]


def sym(i, fields=("id", "kind", "name", "file_path", "start_line")):
    pkg = PKGS[i % len(PKGS)]
    name = NAMES[i % len(NAMES)]
    kind = KINDS[(i * 7) % 4] if i % 3 else "function"
    path = f"{pkg}/{pkg.split('/')[-1]}_{i % 5}.go"
    recv = "" if kind != "method" else ["Server", "Store", "Client"][i % 3] + "."
    full = {
        "id": f"{path}::{recv}{name}",
        "kind": kind,
        "name": name,
        "file_path": path,
        "start_line": 10 + (i * 37) % 900,
        "end_line": 10 + (i * 37) % 900 + 5 + i % 40,
        "signature": f"func {recv and '(s *' + recv[:-1] + ') '}{name}(ctx context.Context, id string) error"
        if kind in ("function", "method") else f"type {name} {'struct' if kind == 'type' else 'interface'}",
        "language": "go",
        "package": pkg,
    }
    return {k: full[k] for k in fields}


def graph_response(n_nodes, n_edges, with_totals):
    nodes = [sym(i, ("id", "kind", "name", "file_path", "start_line")) for i in range(n_nodes)]
    edges = []
    for j in range(n_edges):
        edges.append({
            "from": nodes[(j + 1) % n_nodes]["id"],
            "to": nodes[j % 3]["id"],
            "kind": "calls" if j % 4 else "references",
            "confidence": [1.0, 0.95, 0.8, 0.6][j % 4],
            "origin": ["ast_resolved", "ast_inferred", "lsp", "text_matched"][j % 4],
        })
    value = {"nodes": nodes, "edges": edges}
    if with_totals:
        value.update(total_nodes=n_nodes, total_edges=n_edges, truncated=False)
    return value


SOURCE = (
    "func (s *Server) HandleOrder(w http.ResponseWriter, r *http.Request) {\n"
    "\tctx := r.Context()\n"
    "\tvar req orderRequest\n"
    "\tif err := json.NewDecoder(r.Body).Decode(&req); err != nil {\n"
    "\t\thttp.Error(w, \"bad request: \"+err.Error(), http.StatusBadRequest)\n"
    "\t\treturn\n"
    "\t}\n"
    "\torder, err := s.store.CreateOrder(ctx, req.CustomerID, req.Items)\n"
    "\tif err != nil {\n"
    "\t\ts.log.Error(\"create order\", \"err\", err)\n"
    "\t\thttp.Error(w, \"internal error\", http.StatusInternalServerError)\n"
    "\t\treturn\n"
    "\t}\n"
    "\tw.Header().Set(\"Content-Type\", \"application/json\")\n"
    "\t_ = json.NewEncoder(w).Encode(order)\n"
    "}"
)


def cases():
    yield "search_symbols", "search_symbols: five hits under results, total and truncated", {
        "results": [sym(i) for i in range(5)], "total": 5, "truncated": False}
    yield "search_symbols", "search_symbols: thirty hits with signatures, truncated", {
        "results": [sym(i, ("id", "kind", "name", "file_path", "start_line", "signature"))
                    for i in range(30)],
        "total": 112, "truncated": True}
    yield "get_symbol_source", "get_symbol_source: one record with a short source", {
        "id": "internal/auth/token.go::ParseToken", "kind": "function", "name": "ParseToken",
        "file_path": "internal/auth/token.go", "start_line": 41, "end_line": 47,
        "signature": "func ParseToken(raw string) (*Claims, error)",
        "source": "func ParseToken(raw string) (*Claims, error) {\n\tif raw == \"\" {\n\t\treturn nil, ErrEmpty\n\t}\n\treturn parse(raw)\n}",
        "etag": "9f2c4a1b"}
    yield "get_symbol_source", "get_symbol_source: one record with a handler's source", {
        "id": "internal/httpapi/orders.go::Server.HandleOrder", "kind": "method",
        "name": "HandleOrder", "file_path": "internal/httpapi/orders.go", "start_line": 88,
        "end_line": 103, "from_line": 88,
        "signature": "func (s *Server) HandleOrder(w http.ResponseWriter, r *http.Request)",
        "source": SOURCE, "etag": "c0ffee42"}
    yield "batch_symbols", "batch_symbols: symbols with total and etag, one unresolved id", {
        "symbols": [sym(i, ("id", "kind", "name", "file_path", "start_line", "end_line",
                            "signature")) for i in range(5)]
        + [{"id": "internal/old/gone.go::Legacy", "error": "symbol not found"}],
        "total": 6, "etag": "5d41402a"}
    yield "find_usages", "find_usages as nodes and edges with totals", graph_response(6, 8, True)
    yield "find_usages", "find_usages: edges with file and line, total_edges and truncated", {
        "edges": [{"from": sym(i)["id"], "to": "internal/store/order.go::Order",
                   "kind": ["references", "calls", "instantiates"][i % 3],
                   "file_path": sym(i)["file_path"], "line": 20 + i * 13,
                   "confidence": [1.0, 0.9, 0.75][i % 3],
                   "origin": ["ast_resolved", "lsp", "ast_inferred"][i % 3]}
                  for i in range(14)],
        "total_edges": 21, "truncated": True}
    yield "get_file_summary", "get_file_summary: the file's symbols with total and etag", {
        "symbols": [sym(i, ("id", "kind", "name", "start_line", "signature"))
                    for i in range(2, 22, 2)],
        "total": 10, "etag": "e4d909c2"}
    yield "analyze_hotspots", "analyze kind=hotspots: rows of fan-in, fan-out and score", [
        {"id": sym(i)["id"], "name": sym(i)["name"], "file_path": sym(i)["file_path"],
         "line": sym(i)["start_line"], "fan_in": 40 - i * 2, "fan_out": 3 + i % 7,
         "cross_cut": 1 + i % 4, "score": round(0.98 - i * 0.041, 3)} for i in range(15)]
    yield "analyze_dead_code", "analyze kind=dead_code: unreferenced symbols with a reason", [
        {"id": sym(i)["id"], "kind": sym(i)["kind"], "name": sym(i)["name"],
         "file_path": sym(i)["file_path"], "line": sym(i)["start_line"],
         "reason": ["no incoming references", "only referenced from tests"][i % 2]}
        for i in range(3, 15)]
    yield "contracts", "contracts: API contracts with provider and consumer lists", [
        {"id": f"http::{m}::/api/v1/{p}", "type": "http", "method": m, "path": f"/api/v1/{p}",
         "service": "api", "providers": [f"internal/httpapi/{p}.go::Server.{m.title()}{p.title()}"],
         "consumers": [f"web/src/api/{p}.ts::{m.lower()}{p.title()}"] * (1 + i % 2)}
        for i, (m, p) in enumerate([("GET", "orders"), ("POST", "orders"), ("GET", "users"),
                                    ("DELETE", "sessions"), ("PUT", "profile"),
                                    ("GET", "invoices"), ("POST", "refunds")])]
    yield "get_callers", "get_callers: nodes and edges with totals", graph_response(16, 20, True)
    yield "smart_context", "smart_context: ranked symbols with score and reason, total, etag", {
        "symbols": [dict(sym(i, ("id", "kind", "name", "file_path", "start_line")),
                         score=round(0.97 - i * 0.06, 2),
                         reason=["matches task keywords", "calls the target", "called by the target",
                                 "same package"][i % 4]) for i in range(12)],
        "total": 12, "etag": "b10a8db1"}
    yield "get_dependents", "get_dependents: nodes and edges with totals", graph_response(10, 9, True)
    yield "get_test_targets", "get_test_targets: test functions and the packages to run", {
        "tests": [{"id": f"{PKGS[i % 8]}/{PKGS[i % 8].split('/')[-1]}_test.go::Test{NAMES[i]}",
                   "file_path": f"{PKGS[i % 8]}/{PKGS[i % 8].split('/')[-1]}_test.go",
                   "line": 15 + i * 22, "covers": sym(i)["id"]} for i in range(9)],
        "packages": ["./internal/auth", "./internal/store", "./internal/httpapi"]}
    yield "find_implementations", "find_implementations: implementations with total", {
        "implementations": [{"id": f"internal/store/{b}.go::{b.title()}Store",
                             "kind": "type", "name": f"{b.title()}Store",
                             "file_path": f"internal/store/{b}.go", "start_line": 18 + i * 3}
                            for i, b in enumerate(["postgres", "memory", "sqlite", "redis", "mock"])],
        "total": 5}
    yield "analyze_cycles", "analyze kind=cycles: import cycles with their members", [
        {"size": 3, "severity": "high",
         "nodes": ["internal/store", "internal/billing", "internal/queue"]},
        {"size": 2, "severity": "medium", "nodes": ["internal/auth", "internal/httpapi"]}]
    yield "graph_stats", "graph_stats: counts by kind and language", {
        "total_nodes": 48213, "total_edges": 190442, "files": 1834,
        "by_kind": {"function": 12004, "method": 9877, "type": 3321, "interface": 412,
                    "field": 14230, "variable": 2210, "constant": 1893, "file": 1834,
                    "import": 2432},
        "by_language": {"go": 40211, "typescript": 6102, "sql": 1900},
        "indexed_at": "2026-05-14T09:12:44Z"}
    yield "get_editing_context", "get_editing_context: callers, dependencies, tests, defines", {
        "defines": [sym(i, ("id", "kind", "name", "start_line")) for i in range(3)],
        "callers": [sym(i, ("id", "name", "file_path", "start_line")) for i in range(5, 10)],
        "dependencies": [sym(i, ("id", "name", "file_path")) for i in range(12, 15)],
        "tests": [{"id": "internal/httpapi/orders_test.go::TestHandleOrder",
                   "file_path": "internal/httpapi/orders_test.go", "line": 31}]}
    yield "get_repo_outline", "get_repo_outline: five sections, one per top-level key", {
        "packages": [{"path": p, "files": 3 + i * 2, "symbols": 40 + i * 17}
                     for i, p in enumerate(PKGS)],
        "entry_points": ["cmd/server/main.go::main", "cmd/migrate/main.go::main"],
        "languages": [{"name": "go", "files": 301}, {"name": "typescript", "files": 88},
                      {"name": "sql", "files": 12}],
        "communities": [{"id": i, "name": n, "size": s, "modularity": m}
                        for i, (n, s, m) in enumerate([("core", 412, 0.42), ("http", 133, 0.31),
                                                       ("billing", 97, 0.27)])],
        "most_imported": [{"path": p, "importers": 40 - i * 6}
                          for i, p in enumerate(PKGS[:4])]}


def main():
    for old in os.listdir(OUT):
        if old.startswith("1") and "_bench_" in old:
            os.remove(os.path.join(OUT, old))
    for number, (tool, description, response) in enumerate(cases(), start=1):
        name = f"bench_{number:02}_{tool}"
        doc = {
            "name": name,
            "description": description + " (the payload Gortex's benchmark encoder writes)",
            "operation": "decode-any",
            "input": bench_encode(tool, response),
            "expected": response,
            "tool": tool,
        }
        path = os.path.join(OUT, f"{100 + number}_{name}.json")
        with open(path, "w") as f:
            json.dump(doc, f, indent=2, ensure_ascii=False)
            f.write("\n")
    print(f"wrote {number} fixtures")


if __name__ == "__main__":
    main()
