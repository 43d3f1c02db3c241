//! `autocoder mcp`: the tool catalogue served over the Model Context Protocol, on stdio.
//!
//! One JSON-RPC message per line; stdout carries nothing but messages (logs go to stderr); the
//! server exits when stdin ends. It is a transport over `tools::invoke`: tool calls run
//! concurrently (up to 32) on worker threads (`workers`); one lock serialises the writes, each a
//! whole message. Protocol faults are JSON-RPC errors (-32700 unparsable, -32600 a batch or a
//! malformed request, -32601 unknown method, -32602 unknown tool, -32603 a tool that panicked);
//! anything the model can fix (bad arguments, a path outside the roots, no match) is a tool result
//! with `isError`. A client that declares `roots` is asked for them after `initialized` and
//! whenever it says they changed; its answer, read like any other line, narrows the roots
//! (`roots`). A call may run as a task (`tasks`), which the client polls for its result.

pub(crate) mod roots;
pub(crate) mod server;
mod tasks;
mod workers;
