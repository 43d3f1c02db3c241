#!/usr/bin/env bash
# bench-sandbox.sh: measure the start-up overhead of autocoder's sandbox.
#
# Usage: scripts/bench-sandbox.sh PATH_TO_AUTOCODER_BINARY
#
# Times `true` run four ways with hyperfine (no shell, -N): bare, inside
# `autocoder sandbox`, inside a plain bwrap with the same kind of isolation,
# and inside `autocoder sandbox --backend docker` (only if a Docker engine and
# the image autocoder-test:busybox are there; see scripts/start-docker.sh).
# Prints the median of each in ms and its ratio to bwrap's median, then the
# autocoder/bwrap ratio against the target. Why: the native sandbox must stay
# cheap enough to wrap every command autocoder runs.
#
# A failing command is not ignored: it is run once on its own first, so that
# its own error output shows, and hyperfine stops on a non-zero exit.
set -euo pipefail

IMAGE="autocoder-test:busybox"
TARGET=1.0

die() { echo "bench-sandbox: $*" >&2; exit 1; }

[ $# -eq 1 ] || { echo "usage: $0 PATH_TO_AUTOCODER_BINARY" >&2; exit 2; }
if [ ! -f "$1" ] || [ ! -x "$1" ]; then die "not an executable file: $1"; fi
autocoder=$(readlink -f "$1")
for tool in hyperfine jq bwrap awk; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool not found"
done
# `command -v true` names bash's builtin; the file is what we want to time.
true_bin=$(type -P true) || die "no 'true' executable in PATH"

out=$(mktemp -d)   # hyperfine JSON exports
ws=$(mktemp -d)    # sandbox workspace
trap 'rm -rf "$out" "$ws"' EXIT

# bench NAME WARMUP RUNS CMD [ARG...]: print the median wall time in seconds.
bench() {
  local name=$1 warmup=$2 runs=$3
  shift 3
  "$@" >/dev/null || die "$name: command failed (exit $?): $*"
  # hyperfine's stderr is shown only if it fails (it warns about outliers).
  if ! hyperfine --style none -N --warmup "$warmup" --runs "$runs" \
      --export-json "$out/$name.json" "$(printf '%q ' "$@")" 2>"$out/$name.err"; then
    cat "$out/$name.err" >&2
    die "$name: hyperfine failed"
  fi
  jq -r '.results[0].median' "$out/$name.json"
}

bare=$(bench bare 20 300 "$true_bin")
native=$(bench autocoder 20 300 "$autocoder" sandbox --workspace "$ws" -- true)
bwrap=$(bench bwrap 20 300 bwrap --ro-bind / / --dev /dev --proc /proc \
  --unshare-all --die-with-parent --new-session true)

docker=
docker_skip=
if ! docker info >/dev/null 2>&1; then
  docker_skip="no engine"
elif ! docker image inspect "$IMAGE" >/dev/null 2>&1; then
  docker_skip="no image $IMAGE; run scripts/start-docker.sh"
else
  docker=$(bench docker 3 30 "$autocoder" sandbox --backend docker \
    --image "$IMAGE" --workspace "$ws" -- true)
fi

row() { # NAME MEDIAN_SECONDS
  awk -v n="$1" -v m="$2" -v b="$bwrap" \
    'BEGIN { printf "%-18s %10.2f %9.2f\n", n, m * 1000, m / b }'
}
printf '%-18s %10s %9s\n' command 'median ms' 'x bwrap'
row "bare true" "$bare"
row "autocoder" "$native"
row "bwrap" "$bwrap"
if [ -n "$docker" ]; then
  row "autocoder docker" "$docker"
else
  echo "docker: skipped ($docker_skip)"
fi
awk -v a="$native" -v b="$bwrap" -v t="$TARGET" \
  'BEGIN { printf "target: autocoder/bwrap <= %s — measured %.2f\n", t, a / b }'
