#!/usr/bin/env bash
# bench-review.sh: what `autocoder review` costs without a model. (1) Reading a large real
# history: every commit of this repository's history as one diff, parsed (target: at least
# 100 MB/s; the time review -v says it took to read the diff) and reviewed whole (the rules scan
# every added line; no target). (2) Reviewing a 5,000-line change in a small project (target: at
# most 200 ms).
#
# Usage: scripts/bench-review.sh PATH_TO_AUTOCODER_BINARY
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 PATH_TO_AUTOCODER_BINARY" >&2; exit 2; }
autocoder=$(readlink -f "$1")
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir "$work/empty"
if git rev-parse --git-dir >/dev/null 2>&1; then
  # The history several times over, for a size that outweighs the start-up.
  git log -p -M --format= --no-color >"$work/once.diff"
  for _ in 1 2 3 4 5 6 7 8; do cat "$work/once.diff"; done >"$work/history.diff"
  python3 - "$autocoder" "$work/history.diff" "$work/empty" <<'PY'
import os, re, subprocess, sys, time
autocoder, diff, empty = sys.argv[1:]
size = os.path.getsize(diff)
best, parse = None, None
for _ in range(3):
    start = time.perf_counter()
    done = subprocess.run([autocoder, "review", "-v", "--fail-on", "never", "--budget", "0", "--diff", diff,
                           "--workspace", empty], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, check=True)
    took = time.perf_counter() - start
    best = took if best is None else min(best, took)
    read = int(re.search(r"read \d+ files from --diff \(\d+ bytes\) in (\d+) µs", done.stderr)[1]) / 1e6
    parse = read if parse is None else min(parse, read)
print(f"parsing this repository's history as one diff ({size / 1e6:.0f} MB): {parse * 1000:.0f} ms, "
      f"{size / 1e6 / parse:.0f} MB/s; target >= 100 MB/s")
print(f"reviewing it whole: {best * 1000:.0f} ms, {size / 1e6 / best:.0f} MB/s")
PY
else
  echo "review history: skipped (not a git checkout)"
fi

# A 5,000-line change: a module rewritten, in a project with tests.
mkdir -p "$work/project/src" "$work/project/tests"
python3 - "$work/project" <<'PY'
import sys
root = sys.argv[1]
old = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(2500))
new = "".join(f"def f{i}(x):\n    return x * {i}\n\n" for i in range(2500))
open(f"{root}/src/calc.py", "w").write(old)
open(f"{root}/tests/test_calc.py", "w").write("from src.calc import f1\n\ndef test_f1():\n    assert f1(2) == 2\n")
open(f"{root}/new.py", "w").write(new)
PY
git -C "$work/project" init -q && git -C "$work/project" add -A
git -C "$work/project" -c user.name=b -c user.email=b@example.invalid commit -qm one
mv "$work/project/new.py" "$work/project/src/calc.py"
hyperfine --style none -N --warmup 3 --runs 20 --export-json "$work/change.json" \
  "$autocoder review -q --fail-on never --workspace $work/project" >/dev/null 2>&1
jq -r '.results[0].median' "$work/change.json" | awk '{
  printf "review of a 5,000-line change (2,500 lines removed, 2,500 added) in a git project: %.1f ms; target <= 200 ms\n", $1 * 1000 }'
