"""Drives `agentwire mcp --mode gateway|proxy` with the official MCP Python SDK.

    python python_catalog.py MODE FILE COMMAND [ARGS...]

Starts COMMAND (the gateway or proxy in front of memory, everything, filesystem and the test
server of catalog_server.js) over stdio and walks through its surface: tools/list, browsing
(gateway) or hydrating (proxy), executing a file read of FILE, a validation error, a large
result paged with tool_view (gateway), a tool list that changes (proxy: the SDK receives
notifications/tools/list_changed), and an upstream that dies. Prints what it saw as one JSON
object on stdout.
"""

import asyncio
import json
import os
import sys

import mcp.types as types  # noqa: I001
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def text_of(result):
    return [item.text for item in result.content if item.type == "text"][0]


def ids_of(browse):
    return [line.split(" ")[0] for line in browse.splitlines()[1:] if ":" in line.split(" ")[0]]


async def gateway(session, report, path):
    async def call(name, arguments):
        return await session.call_tool(name, arguments)

    async def browse(arguments):
        return text_of(await call("tool_browse", arguments))

    async def find(namespace, name):
        for tool_id in ids_of(await browse({"path": f"/{namespace}"})):
            if tool_id.startswith(f"{namespace}:{name}#") or tool_id.startswith(f"{namespace}:{name}@"):
                return tool_id
        raise AssertionError(f"no {namespace}:{name}")

    report["browse_query"] = await browse({"query": "read a text file", "top_k": 5})
    report["browse_path"] = await browse({"path": "/"})
    read = await find("fs", "read_text_file")
    report["read"] = json.loads(text_of(await call("tool_execute", {"tool_id": read, "args": {"path": path}})))
    strict = await find("test", "strict")
    invalid = await call("tool_execute", {"tool_id": strict, "args": {"n": 0}})
    report["invalid_is_error"] = bool(invalid.is_error)
    report["invalid"] = json.loads(text_of(invalid))
    rows = await find("test", "rows")
    envelope = json.loads(text_of(await call("tool_execute", {"tool_id": rows, "args": {"n": 400}})))
    handle = envelope["artifacts"][0]["handle"]
    selector = {"pointer": "/rows", "offset": 10, "limit": 3}
    report["page"] = json.loads(text_of(await call("tool_view", {"handle": handle, "selector": selector})))
    die = await find("test", "die")
    report["died"] = json.loads(text_of(await call("tool_execute", {"tool_id": die})))


async def proxy(session, report, path, changed):
    tools = [tool.name for tool in (await session.list_tools()).tools]

    def named(prefix):
        return next(name for name in tools if name.startswith(prefix))

    read = named("fs.read_text_file.")
    report["hydrated"] = json.loads(text_of(await session.call_tool("tool_hydrate", {"tool_id": read})))
    read_result = await session.call_tool("tool_execute", {"tool_id": read, "args": {"path": path}})
    report["read_text"] = text_of(read_result)
    invalid = await session.call_tool("tool_execute", {"tool_id": named("test.strict."), "args": {}})
    report["invalid"] = json.loads(text_of(invalid))
    await session.call_tool("tool_execute", {"tool_id": named("test.grow.")})
    try:
        await asyncio.wait_for(changed.wait(), 60)
        report["list_changed"] = True
    except asyncio.TimeoutError:
        report["list_changed"] = False
    report["tools_after"] = [tool.name for tool in (await session.list_tools()).tools]
    died = await session.call_tool("tool_execute", {"tool_id": named("test.die.")})
    report["died"] = json.loads(text_of(died))


async def main() -> None:
    mode, path, command, *args = sys.argv[1:]
    server = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    report = {}
    changed = asyncio.Event()

    async def on_message(message):
        # The notification itself (mcp 2), or wrapped in a root model (mcp 1).
        notification = getattr(message, "root", message)
        if isinstance(notification, types.ToolListChangedNotification):
            changed.set()

    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as session:
            await session.initialize()
            report["tools"] = [tool.name for tool in (await session.list_tools()).tools]
            if mode == "gateway":
                await gateway(session, report, path)
            else:
                await proxy(session, report, path, changed)
    print(json.dumps(report))


asyncio.run(main())
