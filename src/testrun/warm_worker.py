# autocoder's warm worker (see warm.rs): run in the sandbox as `python -c THIS MODULE` in the
# project's directory. It imports the test runner MODULE (pytest, unittest) once, then answers
# one JSON request a line on stdin with one JSON reply a line on stdout: each run is a child
# forked from it, which runs `python -m MODULE ARGS` as a fresh process would. The project's own
# modules are never imported here, only in the children, so every run reads the code from disk.
# After a run asked to `learn`, what it imported from outside the project is imported here too
# (and said, so that the next worker can be given it: `preload`).
# Python 3.6 and later.
import gc
import importlib
import json
import os
import runpy
import signal
import sys
import threading
import time

OUT = "/tmp/autocoder-warm.out"
ERR = "/tmp/autocoder-warm.err"
LEARNT = "/tmp/autocoder-warm.modules"


def main():
    module = sys.argv[1]
    root = os.path.realpath(os.getcwd())
    # As `python -m` has it: the current directory first on the search path.
    sys.path[0] = root
    requests = os.fdopen(os.dup(0), "r")
    replies = os.fdopen(os.dup(1), "w")
    # What the runner or an import prints here reaches no one; the children get files.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    importlib.import_module(module)
    settle()
    send(replies, {"ready": True, "unsafe": unsafe(root)})
    for line in requests:
        request = json.loads(line)
        if "preload" in request:
            reply = {"preloaded": preload(request["preload"])}
        else:
            reply = run(module, root, request, (requests, replies))
        if request.get("learn"):
            reply["learnt"] = learnt()
            reply["preloaded"] = preload(reply["learnt"])
        if "preloaded" in reply:
            settle()
        reply["unsafe"] = unsafe(root)
        send(replies, reply)


def settle():
    """What is imported here stays, untouched by the children's collections (pytest collects
    twice at its end): frozen, a collection no longer walks it (nor copies its pages)."""
    gc.collect()
    if hasattr(gc, "freeze"):
        gc.freeze()


def send(replies, reply):
    replies.write(json.dumps(reply) + "\n")
    replies.flush()


def run(module, root, request, protocol):
    sys.stdout.flush()
    sys.stderr.flush()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setpgid(0, 0)
            # The tests cannot speak for the worker.
            for stream in protocol:
                os.close(stream.fileno())
            code = child(module, root, request)
        finally:
            os._exit(code)
    status, timed_out = wait(pid, request["limit"])
    # Whatever the run left running goes with it.
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    reply = {
        "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "timed_out": timed_out,
        "duration_ms": int((time.monotonic() - started) * 1000),
    }
    for name, path in (("stdout", OUT), ("stderr", ERR)):
        reply[name], reply[name + "_truncated"] = kept(path, request["max_bytes"])
    return reply


def child(module, root, request):
    for fd, path in ((1, OUT), (2, ERR)):
        os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), fd)
    importlib.invalidate_caches()
    sys.argv = [module] + request["argv"]
    code = 0
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as exit:
        if exit.code is None or isinstance(exit.code, int):
            code = exit.code or 0
        else:
            sys.stderr.write(str(exit.code) + "\n")
            code = 1
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    if request.get("learn"):
        with open(LEARNT, "w") as learnt:
            for name in outside(root):
                learnt.write(name + "\n")
    sys.stdout.flush()
    sys.stderr.flush()
    return code


def wait(pid, limit):
    deadline = time.monotonic() + limit
    pause = 0.0005
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status, False
        if time.monotonic() >= deadline:
            os.killpg(pid, signal.SIGKILL)
            return os.waitpid(pid, 0)[1], True
        time.sleep(pause)
        pause = min(pause * 2, 0.005)


def kept(path, max_bytes):
    """The file's text, its head and tail when longer than max_bytes, as the sandbox keeps."""
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError:
        return "", False
    if len(data) <= max_bytes:
        return data.decode("utf-8", "replace"), False
    head, tail = max_bytes // 2, max_bytes - max_bytes // 2
    omitted = len(data) - head - tail
    marker = "\n[... autocoder: %d bytes of output omitted ...]\n" % omitted
    text = data[:head] + marker.encode() + data[len(data) - tail :]
    return text.decode("utf-8", "replace"), True


def inside(root, path):
    """Whether `path` is the project's own: under its root, and not in the environment the
    interpreter runs from (a `.venv` in the project holds its dependencies)."""
    path = os.path.realpath(path)
    return under(root, path) and not under(os.path.realpath(sys.prefix), path)


def under(directory, path):
    return path == directory or path.startswith(directory + os.sep)


def outside(root):
    """The modules imported from outside the project."""
    names = []
    for name, loaded in list(sys.modules.items()):
        path = getattr(loaded, "__file__", None)
        if name == "__main__" or (path and inside(root, path)):
            continue
        names.append(name)
    return names


def learnt():
    try:
        with open(LEARNT) as learnt:
            return learnt.read().split()
    except OSError:
        return []


def preload(names):
    read_metadata()
    # The plugins too, though pytest then says it cannot rewrite their asserts (a warning):
    # importing one can take longer than the run.
    count = 0
    for name in names:
        if name in sys.modules:
            continue
        try:
            importlib.import_module(name)
            count += 1
        except BaseException:
            pass
    return count


def read_metadata():
    """Reads the installed distributions' entry points once, as pytest does to find its
    plugins: importlib.metadata keeps what it read, and the children find it warm."""
    try:
        from importlib import metadata
    except ImportError:
        return
    for dist in metadata.distributions():
        dist.entry_points


def unsafe(root):
    """Why forking from here would not give what a fresh process gives, if it would not."""
    for name, loaded in list(sys.modules.items()):
        path = getattr(loaded, "__file__", None)
        if path and name != "__main__" and inside(root, path):
            return "importing the runner's dependencies imported the project's %s" % name
    if threading.active_count() > 1:
        return "importing the runner's dependencies started a thread, which a fork leaves behind"
    return None


main()
