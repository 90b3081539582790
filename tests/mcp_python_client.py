"""The official MCP Python SDK (the `mcp` package) against resetctl's /mcp:
what a client of that SDK is shown for each error reply whose request id
the server cannot know. Prints one JSON object: for each case, the error's
code and message as the SDK raises (or, for a body that is not JSON, which
the SDK never sends, parses) it.

Usage: mcp_python_client.py URL
"""

import json
import sys

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import JSONRPCError, jsonrpc_message_adapter
from pydantic import ValidationError


def shown(error: MCPError) -> dict:
    return {"code": error.code, "message": error.message}


async def refused_origin(url: str) -> dict:
    # A browser page on a foreign origin (DNS rebinding): its Origin header.
    async with httpx2.AsyncClient(headers={"Origin": "https://evil.example"}) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                try:
                    await session.initialize()
                except MCPError as e:
                    return shown(e)
    return {"error": "initialized with a foreign Origin"}


async def oversized_body(url: str) -> dict:
    async with streamable_http_client(url) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            try:
                await session.call_tool("list_resets", {"kind": "x" * 70_000})
            except MCPError as e:
                return shown(e)
    return {"error": "a 70 kB call was answered"}


async def not_json(url: str) -> dict:
    async with httpx2.AsyncClient() as http:
        reply = await http.post(
            url,
            content=b"{not json",
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
            },
        )
    try:
        message = jsonrpc_message_adapter.validate_json(reply.content, by_name=False)
    except ValidationError as e:
        return {"status": reply.status_code, "error": "the SDK does not read it as JSON-RPC: "
                + str(e).splitlines()[0], "body": reply.text}
    if not isinstance(message, JSONRPCError):
        return {"error": f"not an error reply: {message!r}"}
    return {"status": reply.status_code, "id": message.id, "code": message.error.code,
            "message": message.error.message}


async def main(url: str) -> None:
    print(json.dumps({
        "refusedOrigin": await refused_origin(url),
        "oversizedBody": await oversized_body(url),
        "notJson": await not_json(url),
    }))


anyio.run(main, sys.argv[1])
