#!/usr/bin/env bash
# bench-run-tests.sh: what `autocoder run-tests` costs. (1) Its overhead over running the same
# runner directly on a sample Python project, each with its bytecode from the runs before
# (targets: at most 5% or 20 ms, whichever is larger; a second run within 1.2x). (2) A second
# run of a Go project, with the toolchain cache run-tests keeps, against Go's own second run
# with its cache (target: within 1.2x). (3) Parsing a 100 MB synthetic pytest log with
# thousands of failures: throughput and peak memory (target: at least 100 MB/s, memory
# independent of the log's size).
#
# Usage: scripts/bench-run-tests.sh PATH_TO_AUTOCODER_BINARY
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 PATH_TO_AUTOCODER_BINARY" >&2; exit 2; }
autocoder=$(readlink -f "$1")
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# pytest's bytecode in the project's __pycache__, run-tests' in its cache; warm-ups make both.
cp -r testdata/projects/pytest-sample "$work/project"
cp -r testdata/projects/pytest-sample "$work/sandboxed"
hyperfine --style none -N -i --warmup 3 --runs 30 --export-json "$work/overhead.json" \
  "env -u PYTHONDONTWRITEBYTECODE -C $work/project PYTHONUNBUFFERED=1 COLUMNS=200 python3 -m pytest -p no:cacheprovider -rfE -v" \
  "env XDG_CACHE_HOME=$work/cache $autocoder run-tests --workspace $work/sandboxed" >/dev/null 2>&1
jq -r '.results | "\(.[0].median) \(.[1].median)"' "$work/overhead.json" | awk '{
  d = $2 - $1; printf "second run of the pytest sample: pytest %.1f ms, run-tests %.1f ms, +%.1f ms (%.2fx); targets <= max(5%%, 20 ms), <= 1.2x\n", $1 * 1000, $2 * 1000, d * 1000, $2 / $1 }'

# Both caches in the work directory; the warm-up runs fill them.
cp -r testdata/projects/go-sample "$work/go"
hyperfine --style none -N -i --warmup 3 --runs 20 --export-json "$work/go.json" \
  "env -C $work/go GOCACHE=$work/go-cache GOFLAGS=-mod=mod GOPROXY=off CGO_ENABLED=0 go test -json ./..." \
  "env XDG_CACHE_HOME=$work/cache $autocoder run-tests --workspace $work/go" >/dev/null 2>&1
jq -r '.results | "\(.[0].median) \(.[1].median)"' "$work/go.json" | awk '{
  printf "second run of the Go sample: go test %.1f ms, run-tests %.1f ms (%.2fx); target <= 1.2x\n", $1 * 1000, $2 * 1000, $2 / $1 }'

# A pytest log of about SIZE_MB, made of real-looking failure blocks and their summary lines.
python3 - "$work/big.log" 100 <<'PY'
import sys
path, size_mb = sys.argv[1], int(sys.argv[2])
target = size_mb * 1024 * 1024
block = ("____ test_case_{n} ____\n\n    def test_case_{n}():\n        values = list(range({n} % 97))\n"
         ">       assert sum(values) == -1\nE       assert {n} == -1\nE        +  where {n} = sum([...])\n\n"
         "tests/test_big.py:{n}: AssertionError\n")
with open(path, "w") as out:
    out.write("==== test session starts ====\n==== FAILURES ====\n")
    n, written = 0, 0
    summary_size = 60
    while written + n * summary_size < target:
        text = block.format(n=n)
        out.write(text)
        written += len(text)
        n += 1
    out.write("==== short test summary info ====\n")
    for i in range(n):
        out.write(f"FAILED tests/test_big.py::test_case_{i} - assert {i} == -1\n")
    out.write(f"==== {n} failed, 12 passed in 99.00s ====\n")
PY
python3 - "$autocoder" "$work/big.log" <<'PY'
import os, resource, subprocess, sys, time
autocoder, log = sys.argv[1], sys.argv[2]
size = os.path.getsize(log)
start = time.perf_counter()
done = subprocess.run([autocoder, "run-tests", "--parse", log, "--framework", "pytest"],
                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
elapsed = time.perf_counter() - start
peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(f"parse a {size / 2**20:.0f} MB pytest log: {elapsed:.2f} s, {size / 2**20 / elapsed:.0f} MB/s, "
      f"peak RSS {peak_kb / 1024:.1f} MB (exit {done.returncode}); target >= 100 MB/s")
PY
