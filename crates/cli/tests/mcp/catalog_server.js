// A small MCP server over stdio for the catalog-mode tests (`--mode proxy|gateway`): tools
// whose list changes, a large result, a tool that counts the calls it received, and a way to
// die.
//
//   node catalog_server.js
//
// Tools: `grow` adds a tool `extra_N` and sends notifications/tools/list_changed; `rows`
// answers `{"rows": [...]}` with `n` objects as JSON text; `count` answers how many
// tools/call requests reached the server (itself included); `strict` needs an integer `n`
// between 1 and 9; `fail` answers with a JSON-RPC error; `die` exits with status 3. `dup` is listed twice (the catalog keeps the
// first and skips the other).
"use strict";
const readline = require("readline");

const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");
const text = (value) => ({ content: [{ type: "text", text: typeof value === "string" ? value : JSON.stringify(value, null, 2) }] });
let extra = 0;
let calls = 0;

const tools = () => {
  const list = [
    { name: "grow", description: "Add a tool to this server's list.", inputSchema: { type: "object" } },
    {
      name: "rows",
      description: "Return n rows of generated records as JSON.",
      inputSchema: { type: "object", properties: { n: { type: "integer", minimum: 0 } }, required: ["n"] },
      annotations: { readOnlyHint: true },
    },
    { name: "count", description: "How many tool calls reached this server.", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
    {
      name: "strict",
      description: "Needs an integer n from 1 to 9.",
      inputSchema: { type: "object", properties: { n: { type: "integer", minimum: 1, maximum: 9 } }, required: ["n"], additionalProperties: false },
    },
    { name: "die", description: "Exit at once.", inputSchema: { type: "object" } },
    { name: "fail", description: "Answer with a JSON-RPC error.", inputSchema: { type: "object" } },
    { name: "dup", description: "Listed twice.", inputSchema: { type: "object" } },
    { name: "dup", description: "Listed twice.", inputSchema: { type: "object" } },
  ];
  for (let i = 1; i <= extra; i++) {
    list.push({ name: `extra_${i}`, description: `Extra tool number ${i}.`, inputSchema: { type: "object" } });
  }
  return list;
};

const lines = readline.createInterface({ input: process.stdin });
lines.on("line", (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  const { id, method, params } = message;
  if (method === "initialize") {
    send({
      jsonrpc: "2.0",
      id,
      result: {
        protocolVersion: "2025-06-18",
        capabilities: { tools: { listChanged: true } },
        serverInfo: { name: "catalog-test", version: "0.0.0" },
      },
    });
  } else if (method === "tools/list") {
    send({ jsonrpc: "2.0", id, result: { tools: tools() } });
  } else if (method === "ping") {
    send({ jsonrpc: "2.0", id, result: {} });
  } else if (method === "tools/call") {
    calls += 1;
    const args = (params && params.arguments) || {};
    switch (params && params.name) {
      case "grow":
        extra += 1;
        send({ jsonrpc: "2.0", id, result: text(`added extra_${extra}`) });
        send({ jsonrpc: "2.0", method: "notifications/tools/list_changed", params: {} });
        break;
      case "rows": {
        const rows = [];
        for (let i = 0; i < args.n; i++) rows.push({ id: i, name: `row ${i}`, group: `g${i % 7}`, ok: i % 3 === 0 });
        send({ jsonrpc: "2.0", id, result: text({ rows, total: rows.length }) });
        break;
      }
      case "count":
        send({ jsonrpc: "2.0", id, result: text({ calls }) });
        break;
      case "strict":
        send({ jsonrpc: "2.0", id, result: text(`n is ${args.n}`) });
        break;
      case "fail":
        send({ jsonrpc: "2.0", id, error: { code: -32000, message: "this tool always fails" } });
        break;
      case "die":
        process.exit(3);
        break;
      default:
        if (/^(dup|extra_\d+)$/.test(params && params.name)) {
          send({ jsonrpc: "2.0", id, result: text(`${params.name} called`) });
        } else {
          send({ jsonrpc: "2.0", id, error: { code: -32602, message: `Unknown tool: ${params && params.name}` } });
        }
    }
  } else if (id !== undefined && method !== undefined) {
    send({ jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } });
  }
});
lines.on("close", () => process.exit(0));
