#!/usr/bin/env bash
# check-corpus.sh: checks the program-repair benchmark corpus in testdata/corpus. Every program's
# tests must pass as written, and every bug of bugs.tsv, seeded by scripts/seed-bug.py, must
# keep its file parseable (Rust: compilable) and make at least one test fail without hanging.
# Without this a bug could silently stop matching its line or stop being caught by the tests,
# and the benchmark would count repairs of bugs that are not there. At least 30% of the bugs must
# be of classes the engine has no change for (they show it ends red quickly, not hangs).
#
# Each run happens in a fresh copy under a temp dir (runners write caches and build output);
# Python runs `python3 -m pytest -q`, JavaScript `node --test`, Rust `cargo test --offline` with
# CARGO_TARGET_DIR in the temp dir. Prints one line per program and per bug, then a summary;
# exits 1 if anything is wrong.
#
# Usage: scripts/check-corpus.sh
set -euo pipefail

die() { echo "check-corpus: $*" >&2; exit 1; }

[ $# -eq 0 ] || { echo "usage: $0" >&2; exit 2; }
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."
corpus=testdata/corpus
bugs=$corpus/bugs.tsv
seed=scripts/seed-bug.py
[ -f "$bugs" ] || die "$bugs not found"
for tool in python3 node cargo timeout; do
  command -v "$tool" >/dev/null || die "$tool not found"
done
python3 -c 'import pytest' 2>/dev/null || die "pytest is not installed for python3"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CARGO_TARGET_DIR=$work/target CARGO_TERM_COLOR=never PYTHONDONTWRITEBYTECODE=1 NO_COLOR=1
TIMEOUT=${CHECK_CORPUS_TIMEOUT:-120} # seconds per test run; a run that takes longer counts as a hang
problems=0

# problem MESSAGE [LOG]: report a problem, with the end of LOG when given.
problem() {
  echo "FAIL $1"
  if [ $# -gt 1 ]; then tail -n 15 "$2" | awk '{ print "     | " $0 }'; fi
  problems=$((problems + 1))
}

# language DIR: python, javascript or rust, from the files in DIR.
language() {
  if [ -f "$1/Cargo.toml" ]; then echo rust
  elif [ -f "$1/package.json" ]; then echo javascript
  else echo python
  fi
}

# run_tests DIR LOG: runs DIR's tests, output to LOG. Status 0 when they pass, 1 when a test
# fails, 2 when the code does not parse or compile or the tests cannot be collected, 3 on a hang.
run_tests() {
  local dir=$1 log=$2 status=0
  case $(language "$dir") in
    python)
      (cd "$dir" && timeout "$TIMEOUT" python3 -m pytest -q -p no:cacheprovider) >"$log" 2>&1 || status=$?
      case $status in 0 | 1) ;; 124) status=3 ;; *) status=2 ;; esac ;;
    javascript)
      local js
      for js in "$dir"/*.js; do
        node --check "$js" >>"$log" 2>&1 || return 2
      done
      (cd "$dir" && timeout "$TIMEOUT" node --test) >>"$log" 2>&1 || status=$?
      case $status in 0) ;; 124) status=3 ;; *) status=1 ;; esac ;;
    rust)
      (cd "$dir" && cargo test --offline --no-run) >"$log" 2>&1 || return 2
      (cd "$dir" && timeout "$TIMEOUT" cargo test --offline) >>"$log" 2>&1 || status=$?
      case $status in 0) ;; 124) status=3 ;; *) status=1 ;; esac ;;
  esac
  return "$status"
}

# The table itself: header, unique ids, known programs and classes, code files only.
python3 - "$bugs" "$corpus" <<'PY' >"$work/table.txt" || true
import os, sys
bugs, corpus = sys.argv[1:]
covered = {"boundary", "flipped", "off_by_one", "arithmetic", "boolean", "operand_swap", "sibling_name",
           "wrong_variable", "missing_call", "missing_condition"}
uncovered = {"missing_statement", "wrong_constant", "wrong_method", "string_literal"}
lines = open(bugs, encoding="utf-8").read().split("\n")
if lines[0] != "id\tprogram\tfile\tline\tfind\treplace\tclass\tcovered":
    print("bugs.tsv: wrong header line")
seen, with_bugs = set(), set()
for n, line in enumerate(lines[1:], start=2):
    if not line:
        continue
    f = line.split("\t")
    if len(f) != 8:
        print(f"bugs.tsv:{n}: {len(f)} fields, expected 8")
        continue
    bug, program, path, _, find, replace, cls, cov = f
    if bug in seen:
        print(f"bugs.tsv:{n}: duplicate id {bug}")
    seen.add(bug)
    with_bugs.add(program)
    if cls not in covered | uncovered:
        print(f"bugs.tsv:{n}: {bug}: unknown class {cls}")
    elif cov != ("yes" if cls in covered else "no"):
        print(f"bugs.tsv:{n}: {bug}: covered is {cov!r} for class {cls}")
    if find == replace:
        print(f"bugs.tsv:{n}: {bug}: replace is the same as find")
    if "test" in path.split("/")[0].lower() or os.path.basename(path).startswith("test_"):
        print(f"bugs.tsv:{n}: {bug}: {path} is a test file")
with_class = [line.split("\t") for line in lines[1:] if line.count("\t") == 7]
share = sum(f[6] in uncovered for f in with_class) / max(len(with_class), 1)
if share < 0.3:
    print(f"bugs.tsv: {share:.0%} of the bugs are of uncovered classes, at least 30% must be")
for program in sorted(os.listdir(corpus)):
    if os.path.isdir(os.path.join(corpus, program)) and program not in with_bugs:
        print(f"program {program} has no bug in bugs.tsv")
PY
while IFS= read -r message; do problem "$message"; done <"$work/table.txt"

declare -A count=()
programs=0
for dir in "$corpus"/*/; do
  name=$(basename "$dir")
  lang=$(language "$dir")
  programs=$((programs + 1))
  count[$lang]=$((${count[$lang]:-0} + 1))
  cp -r "$dir" "$work/$name"
  status=0
  run_tests "$work/$name" "$work/$name.log" || status=$?
  case $status in
    0) echo "ok   program $name ($lang): tests pass" ;;
    1) problem "program $name ($lang): tests fail" "$work/$name.log" ;;
    2) problem "program $name ($lang): does not parse or compile" "$work/$name.log" ;;
    3) problem "program $name ($lang): tests hang (over ${TIMEOUT}s)" "$work/$name.log" ;;
  esac
  rm -rf "${work:?}/$name"
done

nbugs=0
ncovered=0
while IFS=$'\t' read -r id program file _ _ _ class covered; do
  nbugs=$((nbugs + 1))
  [ "$covered" = yes ] && ncovered=$((ncovered + 1))
  dest=$work/bug-$id
  if ! "$seed" "$id" "$dest" >"$work/seed.log" 2>&1; then
    problem "bug $id ($class): cannot be seeded" "$work/seed.log"
    rm -rf "$dest"
    continue
  fi
  if cmp -s "$corpus/$program/$file" "$dest/$file"; then
    problem "bug $id ($class): seeding did not change $file"
    rm -rf "$dest"
    continue
  fi
  status=0
  run_tests "$dest" "$work/bug.log" || status=$?
  case $status in
    1) echo "ok   bug $id ($class): tests fail" ;;
    0) problem "bug $id ($class): all tests still pass" "$work/bug.log" ;;
    2) problem "bug $id ($class): $file no longer parses or compiles" "$work/bug.log" ;;
    3) problem "bug $id ($class): tests hang (over ${TIMEOUT}s)" "$work/bug.log" ;;
  esac
  rm -rf "$dest" "$work/bug.log"
done < <(tail -n +2 "$bugs")

summary="$programs programs ($((${count[python]:-0})) python, $((${count[javascript]:-0})) javascript,"
summary+=" $((${count[rust]:-0})) rust), $nbugs bugs ($ncovered covered, $((nbugs - ncovered)) uncovered)"
if [ "$problems" -eq 0 ]; then
  echo "check-corpus: $summary: all checks passed"
else
  echo "check-corpus: $summary: $problems problem(s)"
  exit 1
fi
