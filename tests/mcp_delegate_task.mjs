// The official TypeScript SDK's client running `delegate_task` on `autocoder mcp` as an MCP task
// (2025-11-25): created at once, polled to its end, its result fetched; or, in cancel mode,
// cancelled with tasks/cancel while the model is asked a second time. The model's configuration
// comes from the environment.
//
// usage: node tests/mcp_delegate_task.mjs SDK_DIR AUTOCODER_BINARY ROOT finish|cancel
import { pathToFileURL } from "node:url";

const [sdk, binary, root, mode] = process.argv.slice(2);
const load = (path) => import(pathToFileURL(`${sdk}/dist/esm/${path}`).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");
const { CreateTaskResultSchema, CallToolResultSchema } = await load("types.js");

const transport = new StdioClientTransport({ command: binary, args: ["mcp", "--root", root], env: process.env, stderr: "inherit" });
const client = new Client({ name: "sdk-delegate", version: "1" });
await client.connect(transport);
await client.listTools();
const task = "Add multiply(a, b) to calculator.py, with a pytest test";

if (mode === "finish") {
  const kinds = [];
  for await (const message of client.experimental.tasks.callToolStream({ name: "delegate_task", arguments: { task, max_steps: 10 } })) {
    kinds.push(message.type === "taskStatus" ? `status ${message.task.status}` : message.type);
    if (message.type === "result") console.log("result:", JSON.stringify(message.result.structuredContent));
    if (message.type === "error") console.log("error:", message.error.message);
  }
  console.log("stream:", [...new Set(kinds)].join(", "));
} else {
  const progress = [];
  const created = await client.request(
    { method: "tools/call", params: { name: "delegate_task", arguments: { task, max_steps: 10 }, task: { ttl: 600000 } } },
    CreateTaskResultSchema,
    { onprogress: (update) => progress.push(update.message ?? "") },
  );
  const id = created.task.taskId;
  console.log("created:", created.task.status);
  while (!progress.some((message) => message.includes("step 2: asking"))) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const cancelled = await client.experimental.tasks.cancelTask(id);
  console.log("cancelled:", cancelled.status);
  const said = await client.experimental.tasks.getTaskResult(id, CallToolResultSchema);
  console.log("said:", JSON.stringify(said.content[0].text));
  console.log("status after:", (await client.experimental.tasks.getTask(id)).status);
}
await client.close();
