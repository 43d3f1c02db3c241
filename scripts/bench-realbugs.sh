#!/usr/bin/env bash
# bench-realbugs.sh: how many real bugs of real Python projects (thefuck, tqdm, cookiecutter:
# the development set, whose maintainers' fixes changed at most 6 lines) `autocoder heal
# --engine mutate` repairs, and how long each takes. The set lives outside the project
# (../shared/realbugs, or the folder REALBUGS names); without it this bench says so and skips.
# Each bug gets --timeout REALBUGS_TIMEOUT (300s, the issue's figure) and heal --jobs 2; a run of
# all 24 takes up to two hours (REALBUGS_ONLY=thefuck-19,tqdm-1 picks some).
#
# Usage: scripts/bench-realbugs.sh PATH_TO_AUTOCODER_BINARY
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 PATH_TO_AUTOCODER_BINARY" >&2; exit 2; }
autocoder=$(readlink -f "$1")
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."
kit=${REALBUGS:-../shared/realbugs}
if [ ! -x "$kit/run.sh" ]; then
  echo "bench-realbugs: no real-bug set at $kit (give its folder in REALBUGS): skipped" >&2
  exit 0
fi
only=()
if [ -n "${REALBUGS_ONLY:-}" ]; then only=(--only "$REALBUGS_ONLY"); fi
results=$(mktemp)
trap 'rm -f "$results"' EXIT
"$kit/run.sh" "$autocoder" --timeout "${REALBUGS_TIMEOUT:-300s}" "${only[@]}" -- --jobs 2 >"$results"
python3 - "$results" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith('{"bug"')]
print("real bugs (heal --engine mutate):")
for row in rows:
    print(f"  {row['bug']:<16} {row['verdict']:<14} {row.get('wall_s', 0):>6.1f} s  "
          f"{row.get('candidates') or 0:>5} candidates  {row.get('heal_status') or ''}")
correct = sum(row["verdict"] == "correct" for row in rows)
plausible = sum(row["verdict"] == "plausible" for row in rows)
print(f"  correct {correct} of {len(rows)}, plausible but not the fix {plausible}")
PY
