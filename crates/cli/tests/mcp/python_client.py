"""Drives `agentwire mcp` with the official MCP Python SDK: a client we did not write.

    python python_client.py COMMAND [ARGS...]

Starts COMMAND (the proxy, with the memory server behind it) over stdio, initializes, lists
the tools, builds a small knowledge graph, reads it back, calls a tool that does not exist,
and prints what it saw as one JSON object on stdout.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters  # noqa: I001
from mcp.client.stdio import stdio_client


async def main() -> None:
    command, *args = sys.argv[1:]
    server = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    report = {}
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            report["server"] = init.server_info.name
            report["protocol"] = init.protocol_version
            tools = await session.list_tools()
            report["tools"] = sorted(tool.name for tool in tools.tools)
            entities = [
                {
                    "name": f"person-{i}",
                    "entityType": "person",
                    "observations": [f"works on project {i % 4}", "speaks English"],
                }
                for i in range(12)
            ]
            created = await session.call_tool("create_entities", {"entities": entities})
            report["created_error"] = bool(created.is_error)
            graph = await session.call_tool("read_graph", {})
            report["graph_error"] = bool(graph.is_error)
            report["graph_text"] = [item.text for item in graph.content if item.type == "text"]
            try:
                missing = await session.call_tool("no_such_tool", {})
                report["missing"] = {
                    "is_error": bool(missing.is_error),
                    "text": [item.text for item in missing.content if item.type == "text"],
                }
            except Exception as error:  # a JSON-RPC error: the SDK raises it
                report["missing"] = {"raised": type(error).__name__, "message": str(error)}
            await session.send_ping()
            report["ping"] = True
    print(json.dumps(report))


asyncio.run(main())
