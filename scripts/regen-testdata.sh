#!/usr/bin/env bash
# regen-testdata.sh: runs the real test runners on the sample projects in testdata/projects and
# saves what they print into testdata/outputs, for the parser tests. Run it after changing a
# sample project or upgrading a runner, and commit the outputs.
#
# Each run happens in a copy of the project (runners write caches and build output); the copy's
# path is taken out of the saved output (paths become relative to the project, the bare root
# reads PROJECT) so the files do not depend on where they were made.
set -euo pipefail

cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."
out=testdata/outputs
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# capture NAME DIR CMD...: run CMD in DIR, save stdout+stderr as NAME.log and the exit code.
capture() {
  local name=$1 dir=$2
  shift 2
  local status=0
  (cd "$dir" && COLUMNS=200 PYTHONDONTWRITEBYTECODE=1 CARGO_TERM_COLOR=never "$@") >"$work/$name.log" 2>&1 || status=$?
  sed "s#$dir/##g; s#$dir#PROJECT#g; s#$work#WORK#g" "$work/$name.log" >"$out/$name.log"
  echo "$status" >"$out/$name.exit"
  echo "$name: exit $status"
}

copy() { # copy PROJECT NAME: a fresh copy of testdata/projects/PROJECT
  rm -rf "${work:?}/$2"
  cp -r "testdata/projects/$1" "$work/$2"
  echo "$work/$2"
}

p=$(copy pytest-sample pytest)
capture pytest-failures "$p" python3 -m pytest -p no:cacheprovider -rfE \
  --junitxml="$work/junit.xml" -o junit_family=xunit1
sed "s#$p/##g; s#$p#PROJECT#g; s#$work#WORK#g" "$work/junit.xml" >"$out/pytest-failures.junit.xml"

p=$(copy pytest-sample pytest-collect)
printf 'import missing_module_xyz\n\ndef test_never():\n    pass\n' >"$p/tests/test_broken.py"
capture pytest-collection-error "$p" python3 -m pytest -p no:cacheprovider -rfE

p=$(copy pytest-sample pytest-empty)
rm "$p"/tests/test_*.py
capture pytest-no-tests "$p" python3 -m pytest -p no:cacheprovider -rfE

p=$(copy shop-python unittest)
capture unittest-failures "$p" python3 -m unittest -v

p=$(copy shop-python unittest-import)
printf 'import missing_module_xyz\n' >"$p/tests/test_broken.py"
capture unittest-import-error "$p" python3 -m unittest -v

p=$(copy cargo-sample cargo)
capture cargo-failures "$p" cargo test --no-fail-fast --color never --offline

p=$(copy cargo-sample cargo-broken)
sed -i 's/a + b/a + missing_value/' "$p/src/lib.rs"
capture cargo-compile-error "$p" cargo test --no-fail-fast --color never --offline

p=$(copy go-sample go)
capture go-failures "$p" env HOME="$work/gohome" GOFLAGS=-mod=mod GOPROXY=off go test -json ./...

p=$(copy go-sample go-broken)
sed -i 's/return values\[i\]/return values[j]/' "$p/calc.go"
capture go-build-error "$p" env HOME="$work/gohome" GOFLAGS=-mod=mod GOPROXY=off go test -json ./...

p=$(copy node-sample node)
capture node-failures "$p" node --test --test-reporter=tap

p=$(copy jest-sample jest)
capture jest-failures "$p" env FORCE_COLOR=0 CI=true jest --json --ci --testLocationInResults

p=$(copy vitest-sample vitest)
capture vitest-failures "$p" env NO_COLOR=1 FORCE_COLOR=0 CI=true vitest run --reporter=json --globals

p=$(copy cargo-sample nextest)
capture nextest-failures "$p" env NEXTEST_EXPERIMENTAL_LIBTEST_JSON=1 cargo nextest run --no-fail-fast \
  --message-format libtest-json-plus --color never --offline

# What a CI log holds: nextest's human output, for failures and for a compile error.
p=$(copy cargo-sample nextest-human)
capture nextest-human-failures "$p" cargo nextest run --no-fail-fast --color never --offline

p=$(copy cargo-sample nextest-human-broken)
sed -i 's/a + b/a + missing_value/' "$p/src/lib.rs"
capture nextest-human-compile-error "$p" cargo nextest run --no-fail-fast --color never --offline
