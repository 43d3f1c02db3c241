"""The official Python SDK's client calling a delegate tool on `autocoder mcp`: the progress it
receives, the structured result (which the SDK checks against the tool's outputSchema), and a
cancellation in the middle of the task. The model's configuration comes from the environment.

Usage: python3 tests/mcp_delegate_client.py AUTOCODER_BINARY ROOT TOOL finish|cancel
"""
import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def field(obj, snake: str, camel: str):
    """SDK 1.x names fields in camelCase, 2.x in snake_case."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


async def main(binary: str, root: str, tool: str, mode: str) -> None:
    server = StdioServerParameters(command=binary, args=["mcp", "--root", root], env=dict(os.environ))
    logged = []

    async def log(params):
        logged.append(str(params.data))
        print("log:", params.level, params.data, flush=True)

    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write, logging_callback=log) as session:
            await session.initialize()
            tools = await session.list_tools()
            print("listed:", tool in [t.name for t in tools.tools], flush=True)
            seen = []

            async def progress(done, total, message):
                seen.append((done, message))
                print("progress:", done, message, flush=True)

            arguments = {"task": "Add multiply(a, b) to calculator.py, with a pytest test", "max_steps": 10}
            if tool == "delegate_to_local_coder":
                arguments["workspace"] = root
            call = asyncio.ensure_future(session.call_tool(tool, arguments, progress_callback=progress))
            if mode == "cancel":
                # Cancelled while the model is asked a second time, after the first step's call.
                while not any("step 2: asking" in (message or "") for _, message in seen):
                    await asyncio.sleep(0.05)
                call.cancel()
                try:
                    await call
                except asyncio.CancelledError:
                    print("cancelled: True", flush=True)
                # The call is not answered: where its patch is comes as a log message.
                for _ in range(200):
                    if logged:
                        break
                    await asyncio.sleep(0.05)
                listed = await session.call_tool("list_files", {})
                print("serving after the cancellation:", not field(listed, "is_error", "isError"), flush=True)
                return
            result = await call
            print("result:", json.dumps(field(result, "structured_content", "structuredContent")), flush=True)
            print("text:", json.dumps(result.content[0].text), flush=True)
            steps = [done for done, _ in seen]
            print("progress increasing:", all(a < b for a, b in zip(steps, steps[1:])), flush=True)


asyncio.run(main(*sys.argv[1:5]))
