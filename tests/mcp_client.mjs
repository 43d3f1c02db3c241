// A real client for `autocoder mcp`: the official TypeScript SDK (what Claude Code, VS Code and
// many agents are built on). It validates every structured result against the tool's output
// schema, answers roots/list, follows progress and cancels through an AbortSignal.
//
// usage: node tests/mcp_client.mjs SDK_DIR AUTOCODER_BINARY ROOT
import { pathToFileURL } from "node:url";

const [sdk, binary, root] = process.argv.slice(2);
const load = (path) => import(pathToFileURL(`${sdk}/dist/esm/${path}`).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");
const { ListRootsRequestSchema } = await load("types.js");

const transport = new StdioClientTransport({ command: binary, args: ["mcp", "--root", root], stderr: "ignore" });
const client = new Client({ name: "sdk-test", version: "1" }, { capabilities: { roots: { listChanged: true } } });
let rootsAsked = 0;
client.setRequestHandler(ListRootsRequestSchema, async () => {
  rootsAsked += 1;
  return { roots: [{ uri: pathToFileURL(`${root}/repo`).href, name: "repo" }] };
});
await client.connect(transport);
console.log("protocol:", transport.protocolVersion ?? client.getServerVersion()?.name);

const tools = await client.listTools();
console.log("tools:", tools.tools.map((tool) => tool.name).join(" "));

// Every tool, its structured result checked by the SDK against the declared output schema.
const calls = [
  ["list_files", {}],
  ["read_file", { path: "app.py" }],
  ["search_text", { pattern: "def " }],
  ["edit_file", { path: "app.py", old_string: "return 1", new_string: "return 2" }],
  ["write_file", { path: "new.txt", content: "new\n" }],
  ["run_command", { argv: ["cat", "app.py"] }],
  ["git_status", {}],
  ["git_diff", { paths: ["app.py"] }],
];
for (const [name, args] of calls) {
  const result = await client.callTool({ name, arguments: args });
  console.log(`${name}:`, result.isError ? `error ${result.content[0].text}` : "ok");
}
const ran = await client.callTool({ name: "run_command", arguments: { argv: ["cat", "app.py"] } });
console.log("ran in the narrowed root:", ran.structuredContent.stdout.includes("return 2"));
const outside = await client.callTool({ name: "read_file", arguments: { path: `${root}/secret.txt` } });
console.log("outside the client's roots refused:", outside.isError === true);
console.log("roots asked:", rootsAsked);

// Progress, then a cancellation that stops the command.
const progress = [];
await client.callTool({ name: "run_command", arguments: { command: "sleep 0.3; echo done" } }, undefined, {
  onprogress: (update) => progress.push(update.progress),
});
console.log("progress increasing:", progress.length > 0 && progress.every((p, i) => i === 0 || p > progress[i - 1]));
const controller = new AbortController();
const started = Date.now();
setTimeout(() => controller.abort("the user pressed stop"), 300);
try {
  await client.callTool({ name: "run_command", arguments: { command: "sleep 30" } }, undefined, {
    signal: controller.signal,
  });
  console.log("cancelled: no");
} catch (error) {
  console.log("cancelled:", Date.now() - started < 10000);
}
const after = await client.callTool({ name: "list_files", arguments: {} });
console.log("serving after the cancellation:", after.isError === false);

// Tasks (2025-11-25): the call is answered with a task at once, polled to its end.
const kinds = [];
let streamed;
for await (const message of client.experimental.tasks.callToolStream({
  name: "run_command",
  arguments: { command: "sleep 1.5; echo later" },
})) {
  kinds.push(message.type === "taskStatus" ? `status ${message.task.status}` : message.type);
  if (message.type === "result") streamed = message.result;
}
console.log("task stream:", [...new Set(kinds)].join(", "));
console.log("task result:", streamed?.structuredContent?.stdout.trim());
// tasks/result waits for the end, and says which task it answers.
const { CreateTaskResultSchema, CallToolResultSchema } = await load("types.js");
const created = await client.request(
  { method: "tools/call", params: { name: "run_command", arguments: { command: "sleep 0.5; echo waited" }, task: { ttl: 60000 } } },
  CreateTaskResultSchema,
);
const waited = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
console.log("waited for:", waited.structuredContent.stdout.trim(), waited._meta["io.modelcontextprotocol/related-task"].taskId === created.task.taskId);
// A tool's error fails its task.
const missing = await client.request(
  { method: "tools/call", params: { name: "read_file", arguments: { path: "no-such-file" }, task: {} } },
  CreateTaskResultSchema,
);
await client.experimental.tasks.getTaskResult(missing.task.taskId, CallToolResultSchema);
console.log("failed task:", (await client.experimental.tasks.getTask(missing.task.taskId)).status);
// Cancelled: its command stops, and the task says so.
const long = await client.request(
  { method: "tools/call", params: { name: "run_command", arguments: { command: "sleep 30" }, task: {} } },
  CreateTaskResultSchema,
);
const stopping = Date.now();
const cancelled = await client.experimental.tasks.cancelTask(long.task.taskId);
const stopped = await client.experimental.tasks.getTaskResult(long.task.taskId, CallToolResultSchema);
console.log("cancelled task:", cancelled.status, (await client.experimental.tasks.getTask(long.task.taskId)).status,
  Date.now() - stopping < 10000, stopped.structuredContent?.signal ?? stopped.content[0].text.slice(0, 40));
const listed = await client.experimental.tasks.listTasks();
console.log("tasks listed:", listed.tasks.length, listed.tasks.map((task) => task.status).join(" "));
try {
  await client.experimental.tasks.getTask("no-such-task");
  console.log("unknown task: found");
} catch (error) {
  console.log("unknown task refused:", String(error.message).includes("no task no-such-task"));
}
await client.close();
