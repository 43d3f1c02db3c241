#!/usr/bin/env bash
# demo.sh: what `make demo` shows, on built-in defaults (no keys, no network): the bundled
# sample issue is fetched, the bundled sample project's tests run inside the sandbox and fail (the
# sample has bugs on purpose), and the failures come back as data in the run document; the MCP
# server answers as an editor would see it; a fix made by hand (heal's part, still to come) is
# tested again and turned into the pull request open-pr would send. It grows with every
# capability autocoder gains.
set -euo pipefail

bin=${1:-target/release/autocoder}
sample=testdata/projects/shop-python
issue=testdata/issues/shop-discount.md
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
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
echo "\$ # the fix, by hand here (heal will make it), tested again, and the pull request it makes:"
echo "\$ autocoder run-tests < run.json | autocoder open-pr --dry-run --repo acme/shop --base main"
sed -i -e 's|price_cents \* percent // 100|price_cents * (100 - percent) // 100|' \
  -e 's|quantity > 50|quantity >= 50|' -e 's|quantity > 10|quantity >= 10|' "$work/shop/pricing.py"
fixed=0
"$bin" run-tests --workspace "$work" --timeout 60s <"$work/run.json" >"$work/fixed.json" || fixed=$?
AUTOCODER_AUTHOR="autocoder demo <demo@example.invalid>" \
  "$bin" open-pr --dry-run --repo acme/shop --base main --workspace "$work" <"$work/fixed.json" >"$work/pr.json"
python3 - "$work/pr.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
tests, pr = doc["tests"], doc["pr"]
print()
print(f"Tests: {tests['outcome']} - {tests['counts']['passed']} passed, {tests['counts']['failed']} failed")
request = pr["request"]
print(f"Commit {pr['commit'][:12]} on {pr['branch']} (in refs/autocoder/dry-run/, nothing pushed)")
print(f"{request['method']} {request['url']}")
print(f"  title: {request['body']['title']}")
for line in request["body"]["body"].splitlines()[:6]:
    print("  |", line)
PY
echo
echo "Next (on their way): heal makes the fix itself, review checks it."
[ "$status" -eq 1 ] && [ "$fixed" -eq 0 ]
