"""An MCP server whose tools change while it runs, built on the official Python SDK (`mcp`).

The tenx-mcp tests run it over stdio (`changing.py stdio`) and streamable HTTP
(`changing.py http PORT`). Only this script is ours: the protocol (framing, the handshake,
`tools/list`, `tools/call`, `notifications/tools/list_changed`, the HTTP sessions) is the SDK's.

Tools at start: `echo(message: str)`, `weather(city: str)` (structured content), `whoami()`
(the call's HTTP headers), `fail()` (a tool error), `nap(seconds: float)`, `die()` (the process exits in the middle of the call), and three
that change the listing and announce it with `notifications/tools/list_changed`:
`grow()` (adds `extra(message: str)`), `shrink()` (removes `echo`) and `reshape()` (replaces
`echo` with one whose `message` is an integer).

Over HTTP the announcements travel on the standalone `GET` stream the client opens (they are
not answers to a call), and so does that of `later(seconds)`, which answers at once and, once
the call is over and nothing is in flight, adds `late(message: str)` and announces it.
`listens()` tells what the `GET` requests were (how many, their `Authorization` headers,
whether one is open now, and the session's protocol version) and `hangup()` ends the open one, as a server or a proxy may.
`changing.py http-no-listen PORT` answers every `GET` with `405 Method Not Allowed`, as a server
that offers no such stream does.
"""

import asyncio
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


def late(message: str) -> str:
    """A tool announced when no call was in flight."""
    return f"late: {message}"


server.add_tool(echo, name="echo")

# What the `GET` requests on the MCP endpoint were (filled in by `with_gets` below).
gets = {"count": 0, "authorization": []}
# Background tasks of `later`, kept until they finish.
background = set()


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


@server.tool()
async def later(ctx: Context, seconds: float) -> str:
    """Answers at once; `seconds` after the call, adds the tool `late` and announces it."""
    session = ctx.session

    async def grow_later() -> None:
        await anyio.sleep(seconds)
        server.add_tool(late, name="late")
        await session.send_tool_list_changed()

    task = asyncio.get_running_loop().create_task(grow_later())
    background.add(task)
    task.add_done_callback(background.discard)
    return "later"


def transport(ctx: Context):
    """This session's HTTP transport (None over stdio)."""
    session_id = (ctx.headers or {}).get("mcp-session-id")
    return server.session_manager._server_instances.get(session_id)


@server.tool()
def listens(ctx: Context) -> dict:
    """The `GET` requests so far, whether this session's standalone stream is open, and the
    protocol version of the session."""
    http = transport(ctx)
    open_now = http is not None and "_GET_stream" in http._request_streams
    return {
        "count": gets["count"],
        "authorization": gets["authorization"],
        "open": open_now,
        "protocol": ctx.request_context.protocol_version,
    }


@server.tool()
def hangup(ctx: Context) -> str:
    """Ends this session's standalone `GET` stream (the client may open it again)."""
    http = transport(ctx)
    if http is not None:
        http.close_standalone_sse_stream()
    return "hung up"


def with_gets(app, allow_get: bool):
    """The app, counting `GET` requests (and answering them 405 unless `allow_get`)."""
    from starlette.responses import Response

    async def wrapped(scope, receive, send):
        if scope["type"] == "http" and scope["method"] == "GET":
            gets["count"] += 1
            headers = dict((k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"])
            gets["authorization"].append(headers.get("authorization"))
            if not allow_get:
                await Response(status_code=405, headers={"Allow": "POST, DELETE"})(scope, receive, send)
                return
        await app(scope, receive, send)

    return wrapped


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] in ("http", "http-no-listen"):
        import uvicorn

        app = with_gets(server.streamable_http_app(), allow_get=sys.argv[1] == "http")
        uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="error")
    else:
        server.run("stdio")
