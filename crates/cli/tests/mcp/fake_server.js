// A deliberately faulty MCP server over stdio, for the proxy's fault tests.
//
//   node fake_server.js MODE [PIDFILE]
//
// It answers initialize, tools/list (one tool, `act`) and ping. On tools/call it does what
// MODE says: `crash` exits with status 3; `hang` stops reading and answering (alive, silent);
// `garbage` writes a line that is not JSON, then a malformed answer to the call; `echo`
// answers with the arguments as JSON text.
"use strict";
const fs = require("fs");
const readline = require("readline");

const [mode, pidfile] = process.argv.slice(2);
if (pidfile) fs.writeFileSync(pidfile, String(process.pid));

const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");
const lines = readline.createInterface({ input: process.stdin });
let hung = false;

lines.on("line", (line) => {
  if (hung) return;
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  const { id, method } = message;
  if (method === "initialize") {
    send({
      jsonrpc: "2.0",
      id,
      result: {
        // The version a server of 2025 speaks, whatever the client asked for.
        protocolVersion: "2025-06-18",
        capabilities: { tools: {} },
        serverInfo: { name: "fake", version: "0.0.0" },
      },
    });
  } else if (method === "tools/list") {
    send({
      jsonrpc: "2.0",
      id,
      result: { tools: [{ name: "act", inputSchema: { type: "object" } }] },
    });
  } else if (method === "ping") {
    send({ jsonrpc: "2.0", id, result: {} });
  } else if (method === "tools/call") {
    if (mode === "crash") process.exit(3);
    if (mode === "hang") {
      hung = true;
      lines.pause();
      setInterval(() => {}, 1000);
      return;
    }
    if (mode === "garbage") {
      process.stdout.write("this is not JSON\n");
      send({ jsonrpc: "2.0", id, error: { code: "not a number" } });
      return;
    }
    send({
      jsonrpc: "2.0",
      id,
      result: { content: [{ type: "text", text: JSON.stringify(message.params.arguments) }] },
    });
  } else if (id !== undefined) {
    send({ jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } });
  }
});
