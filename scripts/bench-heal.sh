#!/usr/bin/env bash
# bench-heal.sh: what `autocoder heal` costs besides the model and the tests, on the sample shop
# with a scripted model (a loopback server speaking OpenAI's chat completions that answers at
# once: attempt 1 fixes one bug, attempt 2 the rest). Reported: the prompt's size per attempt in
# tokens (about 4 characters each, the tools' schemas counted; target at most 12k), whether the
# stable prefix (the system message and the tools) was byte-identical across attempts, and the
# wall time outside the model and the tests
# (target at most 5% and at most 50 ms per attempt), from heal's --events.
#
# Usage: scripts/bench-heal.sh PATH_TO_AUTOCODER_BINARY
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 PATH_TO_AUTOCODER_BINARY" >&2; exit 2; }
autocoder=$(readlink -f "$1")
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."
work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT

python3 - "$work" <<'PY' &
import http.server, json, sys
work = sys.argv[1]
fixes = [
    "shop/pricing.py\n```python\n<<<<<<< SEARCH\n    return price_cents * (100 + percent) // 100\n=======\n"
    "    return price_cents * (100 - percent) // 100\n>>>>>>> REPLACE\n```\n",
    "shop/pricing.py\n```python\n<<<<<<< SEARCH\n    if quantity > 50:\n        return 20\n    if quantity > 10:\n"
    "=======\n    if quantity >= 50:\n        return 20\n    if quantity >= 10:\n>>>>>>> REPLACE\n```\n",
]
class Model(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        with open(f"{work}/prompts.jsonl", "a") as log:
            log.write(json.dumps(body) + "\n")
        # The first fix first; once a change is kept, the second.
        text = fixes["The change so far" in body["messages"][-1]["content"]]
        reply = json.dumps({"choices": [{"message": {"role": "assistant", "content": text},
                            "finish_reason": "stop"}], "usage": {"prompt_tokens": 0, "completion_tokens": 0}})
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply.encode())
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Model)
open(f"{work}/port", "w").write(str(server.server_port))
server.serve_forever()
PY
server=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done

runs=5
for run in $(seq $runs); do
  rm -rf "$work/shop" && cp -r testdata/projects/shop-python "$work/shop"
  : >"$work/prompts.jsonl"
  start=$(date +%s%N)
  "$autocoder" heal -q --engine llm --workspace "$work/shop" --base-url "http://127.0.0.1:$(cat "$work/port")/v1" \
    --model scripted --events "$work/events.jsonl" </dev/null >"$work/heal.json" || true
  end=$(date +%s%N)
  python3 - "$work" $(( (end - start) / 1000000 )) "$run" <<'PY'
import json, sys
work, wall_ms, run = sys.argv[1], int(sys.argv[2]), sys.argv[3]
events = [json.loads(line) for line in open(f"{work}/events.jsonl")]
model = sum(e["latency_ms"] for e in events if e["event"] == "model_call")
# A run as heal waited for it: the runner, and run-tests' own work around it (benchmarked apart).
tests = sum(e.get("wall_ms", e["duration_ms"]) for e in events if e["event"] == "tests")
attempts = sum(1 for e in events if e["event"] == "model_call")
prompts = [json.loads(line) for line in open(f"{work}/prompts.jsonl")]
# The messages and the tools' schemas, which a request offers the model too.
tokens = [(sum(len(m["content"] or "") for m in p["messages"]) + len(json.dumps(p.get("tools", [])))) // 4
          for p in prompts]
same_prefix = len({(p["messages"][0]["content"], json.dumps(p.get("tools"))) for p in prompts}) == 1
status = json.load(open(f"{work}/heal.json"))["heal"]["status"]
outside = wall_ms - model - tests
with open(f"{work}/runs.jsonl", "a") as out:
    out.write(json.dumps({"wall": wall_ms, "model": model, "tests": tests, "outside": outside,
        "attempts": attempts, "tokens": tokens, "same_prefix": same_prefix, "status": status}) + "\n")
PY
done
python3 - "$work/runs.jsonl" <<'PY'
import json, statistics, sys
runs = [json.loads(line) for line in open(sys.argv[1])]
med = lambda key: statistics.median(r[key] for r in runs)
attempts = runs[0]["attempts"]
print(f"heal on the shop sample, scripted model, {len(runs)} runs ({attempts} attempts each, "
      f"status {runs[0]['status']}): wall {med('wall'):.0f} ms, tests {med('tests'):.0f} ms, "
      f"model {med('model'):.0f} ms")
print(f"  outside the model and the tests: {med('outside'):.0f} ms "
      f"({med('outside') / med('wall') * 100:.1f}% of the wall time, "
      f"{med('outside') / attempts:.0f} ms per attempt); target <= 5% and <= 50 ms per attempt")
print(f"  prompt per attempt: {max(max(r['tokens']) for r in runs)} tokens at most; target <= 12000")
print(f"  stable prefix byte-identical across attempts: {all(r['same_prefix'] for r in runs)}")
PY
