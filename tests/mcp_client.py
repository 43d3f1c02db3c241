"""A real MCP client (the official Python SDK) driving `autocoder mcp` over stdio.

Usage: python3 tests/mcp_client.py AUTOCODER_BINARY ROOT
"""
import asyncio
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def field(obj, snake: str, camel: str):
    """SDK 1.x names fields in camelCase, 2.x in snake_case."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


async def main(binary: str, root: str) -> None:
    server = StdioServerParameters(command=binary, args=["mcp", "--root", root])
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            print("protocol:", field(init, "protocol_version", "protocolVersion"))
            tools = await session.list_tools()
            print("tools:", " ".join(tool.name for tool in tools.tools))
            listed = await session.call_tool("list_files", {})
            print("listed:", [e["path"] for e in field(listed, "structured_content", "structuredContent")["entries"]])
            read_result = await session.call_tool("read_file", {"path": "hello.py"})
            print("read:", read_result.content[0].text.strip())
            found = await session.call_tool("search_text", {"pattern": "hello"})
            print("found:", len(field(found, "structured_content", "structuredContent")["matches"]))
            edit = await session.call_tool(
                "edit_file", {"path": "hello.py", "old_string": "'hello'", "new_string": "'hello, world'"}
            )
            print("edited:", not field(edit, "is_error", "isError") and "+print('hello, world')" in edit.content[0].text)
            escape = await session.call_tool("read_file", {"path": "../../etc/passwd"})
            print("escape refused:", field(escape, "is_error", "isError"))
            written = await session.call_tool("write_file", {"path": "notes/todo.txt", "content": "x\n", "create_dirs": True})
            print("written:", field(written, "structured_content", "structuredContent")["created"])
            ran = await session.call_tool("run_command", {"argv": ["sh", "-c", "echo hello"]})
            result = field(ran, "structured_content", "structuredContent")
            print("ran:", result["exit_code"], result["stdout"].strip())
            tested = await session.call_tool("run_tests", {})
            print("tested:", field(tested, "structured_content", "structuredContent")["outcome"])
            status = await session.call_tool("git_status", {})
            changed = field(status, "structured_content", "structuredContent")["files"]
            print("status:", [(c["path"], c["unstaged"]) for c in changed])
            diff = await session.call_tool("git_diff", {"paths": ["hello.py"]})
            print("diff shows the edit:", "+print('hello, world')" in diff.content[0].text)


asyncio.run(main(sys.argv[1], sys.argv[2]))
