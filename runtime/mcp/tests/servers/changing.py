"""An MCP server whose tools change while it runs, built on the official Python SDK (`mcp`).

The tenx-mcp tests run it over stdio (`changing.py stdio`) and streamable HTTP
(`changing.py http PORT`). Only this script is ours: the protocol (framing, the handshake,
`tools/list`, `tools/call`, `notifications/tools/list_changed`, the HTTP sessions) is the SDK's.

Tools at start: `echo(message: str)`, `weather(city: str)` (structured content), `whoami()`
(the call's HTTP headers), `fail()` (a tool error), `nap(seconds: float)`, `die()` (the process exits in the middle of the call), and three
that change the listing and announce it with `notifications/tools/list_changed`:
`grow()` (adds `extra(message: str)`), `shrink()` (removes `echo`) and `reshape()` (replaces
`echo` with one whose `message` is an integer).
"""

import os
import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("changing", version="1.0.0", log_level="ERROR")


def echo(message: str) -> str:
    """Echo a message."""
    return f"echo: {message}"


def echo_number(message: int) -> str:
    """Echo a number."""
    return f"echo: {message}"


def extra(message: str) -> str:
    """A tool announced after the client attached."""
    return f"extra: {message}"


server.add_tool(echo, name="echo")


@server.tool()
def weather(city: str) -> dict:
    """The weather in a city, as structured content."""
    return {"city": city, "temperature": 21}


@server.tool()
def whoami(ctx: Context) -> dict:
    """The HTTP headers of this call (none over stdio), to see what a client forwards."""
    return {"headers": {name.lower(): value for name, value in (ctx.headers or {}).items()}}


@server.tool()
def fail() -> str:
    """Always fails, with a message the client is shown."""
    raise ToolError("the failing tool failed")


@server.tool()
async def nap(seconds: float) -> str:
    """Sleeps, then answers."""
    await anyio.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
async def die() -> str:
    """Exits the process while the call is in flight."""
    await anyio.sleep(0.2)
    os._exit(3)


async def announce(ctx: Context) -> None:
    await ctx.session.send_tool_list_changed()


@server.tool()
async def grow(ctx: Context) -> str:
    """Adds the tool `extra` and announces it."""
    server.add_tool(extra, name="extra")
    await announce(ctx)
    return "grown"


@server.tool()
async def shrink(ctx: Context) -> str:
    """Removes the tool `echo` and announces it."""
    server.remove_tool("echo")
    await announce(ctx)
    return "shrunk"


@server.tool()
async def reshape(ctx: Context) -> str:
    """Replaces `echo` with one that takes an integer, and announces it."""
    server.remove_tool("echo")
    server.add_tool(echo_number, name="echo")
    await announce(ctx)
    return "reshaped"


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
