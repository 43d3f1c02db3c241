#!/usr/bin/env python3
"""hot-functions.py: list the functions a sandbox run executes, in the order it first calls them.

Usage: scripts/hot-functions.py PATH_TO_AUTOCODER_BINARY OUTPUT_FILE
(as root; `make hot-functions` writes scripts/hot-functions.txt and relinks)

`make build` hands the list to the linker (lld's --symbol-ordering-file), which puts these
functions first and together. Why: the binary's code is 8 MB, and the 1,100 or so functions one
`autocoder sandbox -- true` runs were spread across it, so the parent and the child each took a
page fault (and mapped 16 pages) for nearly every one they reached; together they now share a few
pages. The list is made of mangled names, so it goes stale as the code changes: a name the
linker does not find is skipped, and the run is only slower until the list is made again.

How: a uprobe on every function of the binary (tracefs, in a group and an instance of our own),
then the workloads below, then the first hit of each function in time order. The probes are
removed afterwards, also on failure, Ctrl-C, SIGTERM or SIGHUP (not on SIGKILL: then remove the
group `autocoder_hot_PID` with `echo -:autocoder_hot_PID/ >> /sys/kernel/tracing/uprobe_events`).
"""

import os
import re
import signal
import subprocess
import sys
import tempfile

TRACEFS = "/sys/kernel/tracing"
# The ordinary user the sandbox is also run as.
NOBODY = 65534
# Writes to tracefs's command files are parsed a page at a time.
WRITE_LIMIT = 4000


def die(message):
    sys.exit(f"hot-functions: {message}")


def text_segment(binary):
    """Returns (virtual address, file offset) of the executable LOAD segment."""
    headers = subprocess.run(
        ["readelf", "-l", "-W", binary], capture_output=True, text=True, check=True
    ).stdout
    for line in headers.splitlines():
        fields = line.split()
        if fields[:1] == ["LOAD"] and "E" in fields[6:-1]:
            return int(fields[2], 16), int(fields[1], 16)
    die(f"no executable segment in {binary}")


def functions(binary):
    """Returns [(address, name)], one name per address, for every function with a size."""
    symbols = subprocess.run(
        ["nm", "-S", "--defined-only", binary], capture_output=True, text=True, check=True
    ).stdout
    by_address = {}
    for line in symbols.splitlines():
        fields = line.split()
        if len(fields) == 4 and fields[2] in "tTwW" and int(fields[1], 16) > 0:
            by_address.setdefault(int(fields[0], 16), fields[3])
    return sorted(by_address.items())


def write_commands(path, lines):
    """Writes tracefs commands, several lines per write but never a line split across two."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        batch = ""
        for line in lines:
            if len(batch) + len(line) + 1 > WRITE_LIMIT:
                os.write(fd, batch.encode())
                batch = ""
            batch += line + "\n"
        if batch:
            os.write(fd, batch.encode())
    finally:
        os.close(fd)


def workloads(autocoder):
    """Runs what the order is for: sandbox runs first (as root, then as an ordinary user, who
    takes the user-namespace path), then an MCP session."""
    with tempfile.TemporaryDirectory() as workspace:
        def run(*args, stdin=None, user=None):
            subprocess.run(
                [autocoder, *args], cwd=workspace, input=stdin, text=True, user=user,
                group=user, extra_groups=[] if user is not None else None,
                stdout=subprocess.DEVNULL, check=True,
            )

        run("sandbox", "--", "true")
        run("sandbox", "--", "sh", "-c", "echo out; echo err >&2")
        os.chown(workspace, NOBODY, NOBODY)
        run("sandbox", "--", "true", user=NOBODY)
        with open(os.path.join(workspace, "notes.txt"), "w") as notes:
            notes.write("one\ntwo\n")
        session = [
            '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{'
            '"protocolVersion":"2025-11-25","capabilities":{},'
            '"clientInfo":{"name":"hot-functions","version":"1"}}}',
            '{"jsonrpc":"2.0","method":"notifications/initialized"}',
            '{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
            '{"jsonrpc":"2.0","id":3,"method":"tools/call",'
            '"params":{"name":"read_file","arguments":{"path":"notes.txt"}}}',
        ]
        run("mcp", stdin="\n".join(session) + "\n")


def write(path, value):
    with open(path, "w") as control:
        control.write(value)


def leave(signal_number, _frame):
    """SIGTERM and SIGHUP end the script through its `finally` blocks, as Ctrl-C does."""
    sys.exit(128 + signal_number)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: scripts/hot-functions.py PATH_TO_AUTOCODER_BINARY OUTPUT_FILE")
    autocoder, output = os.path.realpath(sys.argv[1]), sys.argv[2]
    if os.geteuid() != 0:
        die("uprobes need root")
    if not os.path.isdir(f"{TRACEFS}/instances"):
        die(f"no tracefs at {TRACEFS} (mount -t tracefs none {TRACEFS})")
    signal.signal(signal.SIGTERM, leave)
    signal.signal(signal.SIGHUP, leave)

    # Our own group and instance, so that another run's probes are never touched.
    group = f"autocoder_hot_{os.getpid()}"
    instance = f"{TRACEFS}/instances/{group}"
    address, offset = text_segment(autocoder)
    targets = functions(autocoder)
    probes = [
        f"p:{group}/f{index} {autocoder}:0x{start - address + offset:x}"
        for index, (start, _) in enumerate(targets)
    ]
    print(f"hot-functions: {len(probes)} probes (adding and removing them takes minutes)",
          file=sys.stderr)
    try:
        write_commands(f"{TRACEFS}/uprobe_events", probes)
        os.mkdir(instance)
        try:
            write(f"{instance}/buffer_size_kb", "65536")
            # Keep the first events if the buffer fills (the first hits are what counts), on one
            # clock for both CPUs, from this script's processes only.
            write(f"{instance}/options/overwrite", "0")
            write(f"{instance}/trace_clock", "mono")
            write(f"{instance}/options/event-fork", "1")
            write(f"{instance}/set_event_pid", str(os.getpid()))
            write(f"{instance}/events/{group}/enable", "1")
            workloads(autocoder)
            write(f"{instance}/tracing_on", "0")
            with open(f"{instance}/trace") as trace:
                hits = trace.read()
            lost = [
                line
                for cpu in os.listdir(f"{instance}/per_cpu")
                for line in open(f"{instance}/per_cpu/{cpu}/stats")
                if line.startswith(("overrun:", "dropped events:"))
                and line.split(":")[1].strip() != "0"
            ]
        finally:
            if os.path.isdir(f"{instance}/events/{group}"):
                write(f"{instance}/events/{group}/enable", "0")
            os.rmdir(instance)
    finally:
        try:
            write_commands(f"{TRACEFS}/uprobe_events", [f"-:{group}/"])
        except OSError:
            pass  # none was added

    order = {}
    for match in re.finditer(r"^.*?: f(\d+): ", hits, re.MULTILINE):
        order.setdefault(int(match.group(1)))
    if lost or not order:
        die(f"the trace lost events ({' '.join(lost).strip()}) or has none; nothing written")
    with open(f"{output}.new", "w") as listing:
        listing.write("".join(targets[index][1] + "\n" for index in order))
    # Run under sudo, the list stays its user's.
    if "SUDO_UID" in os.environ:
        os.chown(f"{output}.new", int(os.environ["SUDO_UID"]), int(os.environ["SUDO_GID"]))
    os.replace(f"{output}.new", output)
    print(f"hot-functions: {len(order)} functions reached, listed in {output}", file=sys.stderr)


if __name__ == "__main__":
    main()
