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
await client.close();
