#!/usr/bin/env bash
# bench-mcp.sh: `autocoder mcp` driven over stdio by ../shared/mcp_bench.py (initialize time,
# tool-call latency p50/p99, peak RSS), and beside it the official filesystem server when npm
# can install it and the official git server when pip can. The client's own time (json.loads of
# each answer) is measured too, against a server that answers at once with autocoder's bytes.
#
# Usage: scripts/bench-mcp.sh PATH_TO_AUTOCODER_BINARY
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 PATH_TO_AUTOCODER_BINARY" >&2; exit 2; }
autocoder=$(readlink -f "$1")
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."
bench=../shared/mcp_bench.py
[ -f "$bench" ] || { echo "mcp bench: skipped ($bench not found)"; exit 0; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -c "import sys; sys.stdout.write(''.join(f'line {n} of a two-thousand-line file, with some text to read\n' for n in range(2000)))" >"$work/big.txt"

run() { # LABEL N TOOL ARGS -- SERVER...
  local label=$1
  shift
  printf '%-34s ' "$label"
  python3 "$bench" "$@" 2>&1 | tail -1
}

run "autocoder read_file (2000 lines)" 500 read_file '{"path": "big.txt"}' -- "$autocoder" mcp --root "$work"
# What the client alone costs for the same answer: a server that answers every call at once
# with autocoder's bytes (its own time, in Python, is a few microseconds of it).
printf '%s\n' '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}' \
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"big.txt"}}}' |
  "$autocoder" mcp --root "$work" | tail -1 >"$work/answer.json"
cat >"$work/canned.py" <<'EOF'
import json, sys
answer = open(sys.argv[1], "rb").read()
result = answer[answer.index(b'"result"'):]
for line in sys.stdin.buffer:
    message = json.loads(line)
    if "id" not in message:
        continue
    if message["method"] == "initialize":
        info = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "canned", "version": "0"}}
        sys.stdout.buffer.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": info}).encode() + b"\n")
    else:
        sys.stdout.buffer.write(b'{"jsonrpc":"2.0","id":%d,' % message["id"] + result)
    sys.stdout.buffer.flush()
EOF
run "  the client alone (canned answer)" 500 read_file '{"path": "big.txt"}' -- python3 "$work/canned.py" "$work/answer.json"
run "autocoder read_file (50 lines)" 2000 read_file '{"path": "big.txt", "offset": 1000, "limit": 50}' -- "$autocoder" mcp --root "$work"
run "autocoder list_files" 2000 list_files '{}' -- "$autocoder" mcp --root "$work"

repo=$work/repo
mkdir "$repo"
for n in $(seq 20); do echo "file $n" >"$repo/f$n.txt"; done
git -C "$repo" init -q
git -C "$repo" add .
git -C "$repo" -c user.name=bench -c user.email=bench@example.com commit -q -m first
echo changed >>"$repo/f1.txt"
echo new >"$repo/new.txt"
run "autocoder git_status (20 files)" 500 git_status '{}' -- "$autocoder" mcp --root "$repo"
run "autocoder git_diff (20 files)" 500 git_diff '{}' -- "$autocoder" mcp --root "$repo"

fs_server=$work/node_modules/.bin/mcp-server-filesystem
if command -v npm >/dev/null && npm install --prefix "$work" --no-fund --no-audit --silent @modelcontextprotocol/server-filesystem >/dev/null 2>&1 && [ -x "$fs_server" ]; then
  run "server-filesystem read_text_file" 500 read_text_file "{\"path\": \"$work/big.txt\"}" -- "$fs_server" "$work"
else
  echo "server-filesystem: skipped (npm could not install @modelcontextprotocol/server-filesystem)"
fi
git_server=$work/venv/bin/mcp-server-git
if python3 -m venv "$work/venv" >/dev/null 2>&1 && "$work/venv/bin/pip" install --quiet mcp-server-git >/dev/null 2>&1 && [ -x "$git_server" ]; then
  run "mcp-server-git git_status" 500 git_status "{\"repo_path\": \"$repo\"}" -- "$git_server" --repository "$repo"
  run "mcp-server-git git_diff_unstaged" 500 git_diff_unstaged "{\"repo_path\": \"$repo\"}" -- "$git_server" --repository "$repo"
else
  echo "mcp-server-git: skipped (pip could not install mcp-server-git)"
fi
echo "targets: initialize <= 10 ms, read_file p50 <= 100 us, git_status p50 <= 1 ms, peak RSS <= 15 MB"
