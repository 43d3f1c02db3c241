#!/usr/bin/env bash
# install-test-tools.sh: installs what the test suite runs and a fresh machine lacks, so that
# `make test` (which calls it first) and `.ci/run` need nothing else.
#
# The tests start the real programs they are about: test runners (pytest, go, jest, vitest),
# coverage.py (heal's ranking),
# the official MCP SDKs as clients, strace, a loop device's mkfs, and a Docker engine with an
# image built offline from busybox-static (scripts/start-docker.sh). Versions are pinned, so
# that a new release cannot change what the tests see.
#
# Idempotent and quiet: each step is skipped when what it installs is there already. As root it
# installs with apt-get, pip and npm; as anyone else it lists what is missing, with the commands
# that install it, and exits 1. A Docker engine that cannot be started is only a warning: the
# Docker tests then skip themselves, saying why.
set -euo pipefail

cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."

# Debian packages, by the command each provides: those the tests need, then those they can do
# without (the Docker tests skip themselves without an engine; `make bench` runs bwrap,
# hyperfine and jq), which only root installs.
NEEDED_PACKAGES=(
  git:git gcc:gcc make:make go:golang-go strace:strace mkfs.ext4:e2fsprogs losetup:mount
  setpriv:util-linux unshare:util-linux node:nodejs npm:npm
)
# dockerd, not docker: a machine may have the client alone, which runs no container.
OPTIONAL_PACKAGES=(dockerd:docker.io bwrap:bubblewrap hyperfine:hyperfine jq:jq)
PYTHON_PACKAGES=(pytest==9.2.0 coverage==7.18.0 mcp==2.3.0)
# The review tests check their SARIF and rdjson with the formats' own validators; Claude Code
# and Codex start the MCP server as the README configures them.
NPM_PACKAGES=(jest@30.5.2 vitest@4.1.12 @modelcontextprotocol/sdk@1.32.2 @microsoft/sarif-multitool@5.7.0
  @umbrelladocs/rdformat-validator@1.0.1 @anthropic-ai/claude-code@2.1.332 @openai/codex@0.171.0)

# mkfs.ext4 and losetup live in /usr/sbin, which an ordinary user's PATH may lack.
export PATH="$PATH:/usr/sbin:/sbin"

say() { echo "install-test-tools: $*" >&2; }

# Runs a command with its output captured; shows the output only if it fails.
quiet() {
  local log rc=0
  log=$(mktemp)
  "$@" >"$log" 2>&1 </dev/null || rc=$?
  if [ "$rc" -ne 0 ]; then
    say "failed (exit $rc): $*"
    cat "$log" >&2
  fi
  rm -f "$log"
  return "$rc"
}

# The packages among "command:package" entries whose command is missing.
missing_of() {
  local entry
  for entry in "$@"; do
    command -v "${entry%%:*}" >/dev/null 2>&1 || echo "${entry#*:}"
  done | sort -u
}

mapfile -t missing_debian < <(missing_of "${NEEDED_PACKAGES[@]}")
mapfile -t missing_optional < <(missing_of "${OPTIONAL_PACKAGES[@]}")
# busybox-static is a file, not a command: the Docker test image is built from it.
if ! [ -x /bin/busybox ] || ldd /bin/busybox >/dev/null 2>&1; then
  missing_optional+=(busybox-static)
fi
# pip is a module of Python's, which Debian packages apart.
python3 -m pip --version >/dev/null 2>&1 || missing_debian+=(python3-pip)

# A Python package counts as there at its pinned version only.
missing_python=()
for pinned in "${PYTHON_PACKAGES[@]}"; do
  name=${pinned%%==*} version=${pinned#*==}
  installed=$(python3 -c "import importlib.metadata as m; print(m.version('$name'))" 2>/dev/null || true)
  [ "$installed" = "$version" ] || missing_python+=("$pinned")
done

missing_npm=()
npm_root=$(npm root --global 2>/dev/null || true)
for pinned in "${NPM_PACKAGES[@]}"; do
  name=${pinned%@*} version=${pinned##*@}
  installed=$(node -p "require('$npm_root/$name/package.json').version" 2>/dev/null || true)
  [ "$installed" = "$version" ] || missing_npm+=("$pinned")
done

if [ "$(id -u)" != 0 ]; then
  if [ ${#missing_debian[@]} -gt 0 ] || [ ${#missing_python[@]} -gt 0 ] || [ ${#missing_npm[@]} -gt 0 ]; then
    say "the tests need programs this machine lacks, and installing them takes root:"
    [ ${#missing_debian[@]} -eq 0 ] || say "  sudo apt-get install -y ${missing_debian[*]}"
    [ ${#missing_python[@]} -eq 0 ] || say "  python3 -m pip install ${missing_python[*]}"
    [ ${#missing_npm[@]} -eq 0 ] || say "  sudo npm install --global ${missing_npm[*]}"
    say "or run this script as root: sudo $0"
    exit 1
  fi
else
  missing_all=("${missing_debian[@]}" "${missing_optional[@]}")
  if [ ${#missing_all[@]} -gt 0 ]; then
    command -v apt-get >/dev/null 2>&1 || {
      say "no apt-get here to install ${missing_all[*]}; install them with this system's package manager"
      exit 1
    }
    export DEBIAN_FRONTEND=noninteractive
    quiet apt-get update
    quiet apt-get install -y --no-install-recommends ca-certificates "${missing_all[@]}"
  fi
  if [ ${#missing_python[@]} -gt 0 ]; then
    # Debian's own Python is marked externally managed (PEP 668); the test tools go into it
    # all the same, as root, as they would on a CI machine.
    PIP_BREAK_SYSTEM_PACKAGES=1 quiet python3 -m pip install --quiet --disable-pip-version-check \
      --root-user-action=ignore "${missing_python[@]}"
  fi
  # Global, so that the sample projects and tests/mcp_client.mjs need no node_modules.
  if [ ${#missing_npm[@]} -gt 0 ]; then
    quiet npm install --global --no-fund --no-audit "${missing_npm[@]}"
    # npm does not run the package's own install script (which makes its binary executable).
    chmod a+x "$(npm root --global)"/@microsoft/sarif-multitool/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool 2>/dev/null || true
  fi
fi

if ! scripts/start-docker.sh; then
  say "warning: no usable Docker engine; the Docker backend's tests will skip themselves"
fi
