#!/usr/bin/env bash
# demo.sh: what `make demo` shows, on built-in defaults (no keys, no network): the bundled sample
# project's tests run inside the sandbox, fail (the sample has bugs on purpose), and the result
# comes back as JSON. It grows with every capability autocoder gains.
set -euo pipefail

bin=${1:-target/release/autocoder}
sample=testdata/projects/shop-python
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$sample/." "$work"

echo "\$ autocoder sandbox --workspace $sample -- python3 -m unittest"
status=0
"$bin" sandbox --workspace "$work" --timeout 60s -- python3 -m unittest >"$work/result.json" || status=$?

python3 - "$work/result.json" <<'PY'
import json, sys
result = json.load(open(sys.argv[1]))["sandbox"]
layers = result["layers"]
print()
print("The tests ran in the sandbox and exited with", result["exit_code"], "in", result["duration_ms"], "ms.")
print("Their report (stderr, last lines):")
for line in result["stderr"].rstrip().splitlines()[-12:]:
    print("   ", line)
print()
print("Layers in force:")
print("  filesystem :", layers["filesystem"]["mechanism"], "ABI", layers["filesystem"]["abi"],
      "- writable:", ", ".join(layers["filesystem"]["read_write"]))
print("  network    :", "allowed" if layers["network"]["allowed"] else "off (" + ", ".join(layers["network"]["mechanisms"]) + ")")
ident = layers["identity"]
print("  identity   : uid", ident["uid"], "- capabilities:", ident["capabilities"], "- no_new_privs:", ident["no_new_privs"])
res = layers["resources"]
print("  resources  :", res["mechanism"], "- memory", res["memory_bytes"] // 2**20, "MiB, pids", res["pids"], ", cpus", res["cpus"])
print("  containment: pid namespace", layers["containment"]["pid_namespace"], "- degraded:", layers["degraded"] or "none")
PY
echo
echo "autocoder sandbox exited with $status, the tests' own status (1: tests failed, as the sample intends)."
[ "$status" -eq 1 ]
