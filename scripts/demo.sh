#!/usr/bin/env bash
# demo.sh: what `make demo` shows, on built-in defaults (no keys, no network): the bundled
# sample issue is fetched, the bundled sample project's tests run inside the sandbox and fail (the
# sample has bugs on purpose), and the failures come back as data in the run document. It grows
# with every capability autocoder gains.
set -euo pipefail

bin=${1:-target/release/autocoder}
sample=testdata/projects/shop-python
issue=testdata/issues/shop-discount.md
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$sample/." "$work"

echo "\$ autocoder fetch-issue $issue | autocoder run-tests --workspace $sample"
status=0
"$bin" fetch-issue "$issue" | "$bin" run-tests --workspace "$work" --timeout 60s >"$work/run.json" || status=$?

python3 - "$work/run.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
issue, tests = doc["issue"], doc["tests"]
sandbox = tests["sandbox"]
layers = sandbox["layers"]
print()
print("Issue:", issue["title"], "(" + ", ".join(issue["labels"]) + ")")
counts = tests["counts"]
print(f"Tests ({tests['framework']}, {tests['duration_ms']} ms): {tests['outcome']} -",
      f"{counts['passed']} passed, {counts['failed']} failed, {counts['errors']} errors")
for failure in tests["failures"]:
    print(f"  {failure['id']}")
    print(f"      {failure['file']}:{failure['line']}  {failure['kind']}: {failure['message']}")
print()
print("They ran in the sandbox:")
print("  files      :", layers["filesystem"]["view"], "view +", layers["filesystem"]["mechanism"],
      "ABI", layers["filesystem"]["abi"], "- writable:", ", ".join(layers["filesystem"]["read_write"]))
print("  network    :", "allowed" if layers["network"]["allowed"] else "off (" + ", ".join(layers["network"]["mechanisms"]) + ")")
ident = layers["identity"]
print("  identity   : uid", ident["uid"], "- capabilities:", ident["capabilities"], "- no_new_privs:", ident["no_new_privs"])
res = layers["resources"]
print("  resources  :", res["mechanism"], "- memory", res["memory_bytes"] // 2**20, "MiB, pids", res["pids"], ", cpus", res["cpus"])
print("  containment: pid namespace", layers["containment"]["pid_namespace"], "- degraded:", layers["degraded"] or "none")
PY
echo
echo "autocoder run-tests exited with $status (1: the tests fail, as the sample intends)."

echo
echo "\$ autocoder mcp --root $sample    # what an editor or agent sees, over stdio"
python3 - "$bin" "$work" <<'PY'
import json, subprocess, sys
binary, root = sys.argv[1], sys.argv[2]
server = subprocess.Popen([binary, "mcp", "--root", root], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
def request(id, method, params):
    server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}) + "\n")
    server.stdin.flush()
    return json.loads(server.stdout.readline())["result"]
init = request(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "demo", "version": "1"}})
server.stdin.write('{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
print("protocol", init["protocolVersion"], "- tools:", ", ".join(t["name"] for t in request(2, "tools/list", {})["tools"]))
found = request(3, "tools/call", {"name": "search_text", "arguments": {"pattern": "def ", "glob": "shop/**"}})
print("search_text 'def ' in shop/:")
for match in found["structuredContent"]["matches"][:4]:
    print(f"  {match['path']}:{match['line']}  {match['text'].strip()}")
server.stdin.close()
server.wait()
PY
echo
echo "Next (on their way): heal repairs the code, review checks the change, open-pr proposes it."
[ "$status" -eq 1 ]
