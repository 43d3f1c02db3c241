#!/usr/bin/env bash
# start-docker.sh: make sure a Docker engine is reachable and that the local
# test image autocoder-test:busybox exists and can run a container.
#
# Why: the tests of autocoder's docker backend need a running engine, but
# neither CI nor developer machines run one as a service, and no image can be
# pulled from a registry. So this script starts dockerd itself if needed, and
# builds the image offline from Debian's statically linked busybox (package
# busybox-static) with `docker import`.
#
# Idempotent: if the engine is up and the image exists, it only checks that a
# container runs. Quiet unless something fails. Exit 0 when the engine is up
# and the image works; otherwise non-zero with a one-line reason on stderr.
set -euo pipefail

IMAGE="autocoder-test:busybox"
SOCK=unix:///var/run/docker.sock
LOG=/tmp/dockerd.log
BUSYBOX=/bin/busybox
WAIT_SECS=30

die() { echo "start-docker: $*" >&2; exit 1; }

# True if process PID is alive and named NAME. Zombies do not count: a killed
# dockerd or containerd may linger as a zombie for a while if PID 1 reaps
# lazily, and dockerd would then wait on it until it times out.
alive() {
  local pid=$1 name=$2 state
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ] || return 1
  state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}
dockerd_alive() {
  local pid
  for pid in $(pgrep -x dockerd 2>/dev/null); do
    alive "$pid" dockerd && return 0
  done
  return 1
}

command -v docker >/dev/null 2>&1 || die "docker CLI not found (apt-get install docker.io)"

# --- 1. engine -------------------------------------------------------------
if ! docker info >/dev/null 2>&1; then
  command -v dockerd >/dev/null 2>&1 || die "no engine reachable and dockerd not found (apt-get install docker.io)"
  [ "$(id -u)" = 0 ] || die "no engine reachable and not root, so cannot start dockerd"

  # Start dockerd unless one is already running (e.g. still starting up, or
  # started by a concurrent run of this script): then only wait for it.
  if ! dockerd_alive; then
    # Pid files left by a dockerd (and its containerd) that were killed would
    # make the new dockerd refuse to start or wait on a dead containerd.
    rm -f /var/run/docker.pid
    ctr_pidfile=/var/run/docker/containerd/containerd.pid
    if [ -f "$ctr_pidfile" ] && ! alive "$(cat "$ctr_pidfile" 2>/dev/null)" containerd; then
      rm -f "$ctr_pidfile"
    fi
    nohup dockerd --host "$SOCK" >>"$LOG" 2>&1 </dev/null &
    dockerd_pid=$!
  fi

  up=
  deadline=$((SECONDS + WAIT_SECS))
  while [ "$SECONDS" -lt "$deadline" ]; do
    if docker info >/dev/null 2>&1; then up=1; break; fi
    if [ -n "${dockerd_pid:-}" ] && ! kill -0 "$dockerd_pid" 2>/dev/null; then
      die "dockerd exited during startup; last log line ($LOG): $(tail -n 1 "$LOG" 2>/dev/null)"
    fi
    sleep 0.25
  done
  [ -n "$up" ] || die "dockerd is running but the engine was not reachable within ${WAIT_SECS}s; see $LOG"
fi

# --- 2. test image -----------------------------------------------------------
built=
if ! docker image inspect "$IMAGE" >/dev/null 2>&1; then
  [ -x "$BUSYBOX" ] || die "$BUSYBOX missing (apt-get install busybox-static)"
  # Debian's `busybox` package (dynamically linked) also ships /bin/busybox;
  # that one would not run in an image without libc.
  if ldd "$BUSYBOX" >/dev/null 2>&1; then
    die "$BUSYBOX is dynamically linked (apt-get install busybox-static)"
  fi

  rootfs=$(mktemp -d)
  trap 'rm -rf "$rootfs"' EXIT
  mkdir -p "$rootfs"/{bin,etc,root,tmp,work,dev,proc,sys}
  chmod 1777 "$rootfs/tmp"
  chmod 0700 "$rootfs/root"
  cp "$BUSYBOX" "$rootfs/bin/busybox"
  chmod 0755 "$rootfs/bin/busybox"
  for applet in $("$BUSYBOX" --list); do
    [ "$applet" = busybox ] || ln -sf busybox "$rootfs/bin/$applet"
  done
  for applet in sh true false cat echo id ls sleep touch mkdir rm env kill wc \
                head dd yes printf test '[' ps pwd; do
    [ -L "$rootfs/bin/$applet" ] || die "busybox lacks applet '$applet'"
  done
  cat >"$rootfs/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
  cat >"$rootfs/etc/group" <<'EOF'
root:x:0:
nogroup:x:65534:
EOF

  tar --numeric-owner --owner=0 --group=0 -C "$rootfs" -c . \
    | docker import --change 'ENV PATH=/bin' --change 'CMD ["/bin/sh"]' - "$IMAGE" >/dev/null \
    || die "docker import of $IMAGE failed"
  built=1
fi

# --- 3. check that a container actually runs ---------------------------------
if ! out=$(docker run --rm --network none "$IMAGE" true 2>&1); then
  # Do not leave a broken image behind, so the next run rebuilds it.
  [ -z "$built" ] || docker image rm -f "$IMAGE" >/dev/null 2>&1 || true
  die "engine is up but 'docker run $IMAGE true' failed: $(printf '%s' "$out" | tr '\n' ' ')"
fi
