#!/usr/bin/env bash
# demo.sh: what `make demo` shows, on built-in defaults (no keys, no network, no model): the
# whole pipeline on the bundled sample. The sample issue is fetched, the sample project's tests
# run inside the sandbox and fail (it has bugs on purpose), the failures come back as data in the
# run document, heal's offline engine repairs them (no model is called), review says what the
# repair risks, and it becomes the pull request open-pr would send (--dry-run: nothing is
# pushed); the MCP server answers as an editor would see it. The documents are kept in a
# directory named at the end. It grows with every capability autocoder gains.
set -euo pipefail

bin=${1:-target/release/autocoder}
sample=testdata/projects/shop-python
issue=testdata/issues/shop-discount.md
work=$(mktemp -d)
cp -r "$sample/." "$work"
# The sample as a clone of its repository would be (open-pr commits to it; nothing is pushed).
git -C "$work" init -q -b main
git -C "$work" add -A
git -C "$work" -c user.name=demo -c user.email=demo@example.invalid commit -qm "the sample shop"
git -C "$work" remote add origin https://github.com/acme/shop.git

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
echo "\$ autocoder heal --engine mutate < run.json    # the offline engine: no model, no network"
healed=0
"$bin" heal --engine mutate --workspace "$work" <"$work/run.json" >"$work/healed.json" || healed=$?
python3 - "$work/healed.json" <<'PY'
import json, sys
heal = json.load(open(sys.argv[1]))["heal"]
tests = heal["tests"]
print()
print(f"Repair: {heal['status']} - {heal['reason']} ({heal['candidates_tried']} candidates tested in the sandbox)")
for attempt in heal["attempts"]:
    print(f"  kept: {attempt['change']}")
print(f"Tests after: {tests['outcome']} - {tests['counts']['passed']} passed, {tests['counts']['failed']} failed")
print()
print(heal["diff"], end="")
PY

echo
echo "\$ autocoder review < healed.json"
"$bin" review -q <"$work/healed.json" >"$work/reviewed.json"
python3 - "$work/reviewed.json" <<'PY'
import json, sys
review = json.load(open(sys.argv[1]))["review"]
print()
print(f"Review: {review['verdict']} - {review['summary']}")
for risk in review["risks"]:
    print(f"  {risk['severity']:6} {risk['rule']}: {risk['message']}")
for path, tests in review["test_mapping"]["covered"].items():
    print(f"  {path} is tested by {', '.join(tests)}")
PY

echo
echo "\$ autocoder open-pr --dry-run --repo acme/shop --base main < reviewed.json"
AUTOCODER_AUTHOR="autocoder demo <demo@example.invalid>" \
  "$bin" open-pr --dry-run --repo acme/shop --base main --workspace "$work" <"$work/reviewed.json" >"$work/pr.json"
python3 - "$work/pr.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
pr = doc["pr"]
request = pr["request"]
print()
print(f"Commit {pr['commit'][:12]} on {pr['branch']} (in refs/autocoder/dry-run/, nothing pushed)")
print(f"{request['method']} {request['url']}")
print(f"  title: {request['body']['title']}")
for line in request["body"]["body"].splitlines()[:16]:
    print("  |", line)
PY
echo
echo "The run documents (run.json, healed.json, reviewed.json, pr.json) and the repaired sample are in $work."
[ "$status" -eq 1 ] && [ "$healed" -eq 0 ]
