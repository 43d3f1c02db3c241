# autocoder's warm worker (see warm.rs): run in the sandbox as `python -c THIS MODULE` in the
# project's directory. It imports the test runner MODULE (pytest, unittest) once, then answers
# one JSON request a line on stdin with one JSON reply a line on stdout: each run is a child
# forked from it, which runs `python -m MODULE ARGS` as a fresh process would. The project's own
# modules are never imported here, only in the children, so every run reads the code from disk.
# After a run asked to `learn`, what it imported from outside the project is imported here too
# (and said, so that the next worker can be given it: `preload`).
#
# A child starts as a fresh process would: what the worker imported is out of `sys.modules`
# until something imports it again (then it comes back at once, with what its import brought
# in); its temporary directory and home are its own, removed after it; and what it leaves
# running is killed. Python 3.6 and later.
import sys

import runpy  # what `python -m` has imported too, before the runner

# What a fresh `python -m` process has in sys.modules.
FRESH = set(sys.modules)

import gc
import importlib
import importlib.machinery
import json
import os
import shutil
import signal
import stat
import tempfile
import threading
import time

OUT = "/tmp/autocoder-warm.out"
ERR = "/tmp/autocoder-warm.err"
LEARNT = "/tmp/autocoder-warm.modules"

# For each module imported here, the modules its import brought in.
BROUGHT = {}


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
    prctl = libc_prctl()
    # What a run leaves running is re-parented here, to be ended; and the tests cannot open
    # this process's descriptors (its pipes) through /proc.
    prctl(36, 1)  # PR_SET_CHILD_SUBREAPER
    prctl(4, 0)  # PR_SET_DUMPABLE
    imported(module)
    settle()
    send(replies, {"ready": True, "unsafe": unsafe(root)})
    for line in requests:
        request = json.loads(line)
        if "preload" in request:
            reply = {"preloaded": preload(request["preload"])}
        else:
            reply = run(module, root, request, (requests, replies), prctl)
        if request.get("learn"):
            reply["learnt"] = learnt()
            reply["preloaded"] = preload(reply["learnt"])
        if "preloaded" in reply:
            settle()
        reply["unsafe"] = unsafe(root)
        send(replies, reply)


def libc_prctl():
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return lambda option, value: libc.prctl(option, value, 0, 0, 0)
    except (ImportError, OSError):
        return lambda option, value: -1


def settle():
    """What is imported here stays, untouched by the children's collections (pytest collects
    twice at its end): frozen, a collection no longer walks it (nor copies its pages)."""
    gc.collect()
    if hasattr(gc, "freeze"):
        gc.freeze()


def send(replies, reply):
    replies.write(json.dumps(reply) + "\n")
    replies.flush()


def run(module, root, request, protocol, prctl):
    sys.stdout.flush()
    sys.stderr.flush()
    started = time.monotonic()
    own = tempfile.mkdtemp(prefix="autocoder-run-")
    for path in (OUT, ERR):
        try:
            os.unlink(path)
        except OSError:
            pass
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setpgid(0, 0)
            prctl(4, 1)  # its own /proc entries as a fresh process has them
            # The tests cannot speak for the worker.
            for stream in protocol:
                os.close(stream.fileno())
            code = child(module, root, request, own)
        finally:
            os._exit(code)
    status, timed_out = wait(pid, request["limit"])
    end_leftovers(pid)
    reply = {
        "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "timed_out": timed_out,
        "duration_ms": int((time.monotonic() - started) * 1000),
    }
    for name, path in (("stdout", OUT), ("stderr", ERR)):
        reply[name], reply[name + "_truncated"] = kept(path, request["max_bytes"])
    shutil.rmtree(own, ignore_errors=True)
    return reply


def child(module, root, request, own):
    for fd, path in ((1, OUT), (2, ERR)):
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        os.dup2(os.open(path, flags, 0o600), fd)
    home = os.path.join(own, "home")
    os.mkdir(home)
    os.environ.update(TMPDIR=own, HOME=home)
    tempfile.tempdir = None
    hide_preloaded()
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


def hide_preloaded():
    """Takes what the worker imported out of sys.modules, to come back when imported."""
    stash = {name: sys.modules.pop(name) for name in list(sys.modules) if name not in FRESH}
    sys.meta_path.insert(0, Preloaded(stash))


class Preloaded:
    """Finds and loads the modules the worker imported: each comes back into sys.modules as it
    was, with the modules its import brought in, as a fresh import would bring them."""

    def __init__(self, stash):
        self.stash = stash

    def find_spec(self, name, path=None, target=None):
        if name not in self.stash:
            return None
        # As the module's own spec says (a package, its file), loaded from here.
        was = getattr(self.stash[name], "__spec__", None)
        locations = getattr(was, "submodule_search_locations", None)
        spec = importlib.machinery.ModuleSpec(
            name, self, origin=getattr(was, "origin", None), is_package=locations is not None
        )
        spec.submodule_search_locations = locations
        return spec

    def create_module(self, spec):
        module = self.stash.pop(spec.name)
        waiting = list(BROUGHT.get(spec.name, ()))
        while waiting:
            name = waiting.pop()
            if name in self.stash:
                sys.modules[name] = self.stash.pop(name)
                waiting.extend(BROUGHT.get(name, ()))
        return module

    def exec_module(self, module):
        pass


def end_leftovers(pid):
    """Kills what the run left: its process group, and what escaped it (re-parented here)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    while True:
        left = children()
        if not left:
            return
        for child_pid in left:
            try:
                os.kill(child_pid, signal.SIGKILL)
                os.waitpid(child_pid, 0)
            except OSError:
                pass


def children():
    """This process's children, from /proc."""
    me, found = os.getpid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as info:
                fields = info.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == me:
            found.append(int(entry))
    return found


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
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return "", False
    # What a test put in its place (a pipe, a device) is not read.
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return "", False
    try:
        with os.fdopen(fd, "rb") as file:
            data = file.read(max_bytes + 1)
            if len(data) <= max_bytes:
                return data.decode("utf-8", "replace"), False
            size = os.fstat(file.fileno()).st_size
            head, tail = max_bytes // 2, max_bytes - max_bytes // 2
            file.seek(max(size - tail, head))
            end = file.read(tail)
    except OSError:
        return "", False
    marker = "\n[... autocoder: %d bytes of output omitted ...]\n" % (size - head - len(end))
    text = data[:head] + marker.encode() + end
    return text.decode("utf-8", "replace"), True


def inside(root, path):
    """Whether `path` is the project's own: under its root, and not in the environment the
    interpreter runs from (a `.venv` in the project holds its dependencies)."""
    path = os.path.realpath(path)
    return under(root, path) and not under(os.path.realpath(sys.prefix), path)


def under(directory, path):
    return path == directory or path.startswith(directory + os.sep)


def origin(loaded):
    """Where a module came from: its file, `built-in` or `frozen`; None when it does not say
    (an object put in sys.modules in a module's place)."""
    path = getattr(loaded, "__file__", None)
    if path:
        return path
    spec = getattr(loaded, "__spec__", None)
    return getattr(spec, "origin", None)


def outside(root):
    """The modules imported from outside the project."""
    names = []
    for name, loaded in list(sys.modules.items()):
        came = origin(loaded)
        if name == "__main__" or came is None:
            continue
        if came in ("built-in", "frozen") or not inside(root, came):
            names.append(name)
    return names


def learnt():
    try:
        with open(LEARNT) as learnt:
            return learnt.read().split()
    except OSError:
        return []


def imported(name):
    before = set(sys.modules)
    importlib.import_module(name)
    BROUGHT[name] = set(sys.modules) - before - {name}


def preload(names):
    read_metadata()
    count = 0
    for name in names:
        if name in sys.modules:
            continue
        try:
            imported(name)
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
        came = origin(loaded)
        if name == "__main__" or came in (None, "built-in", "frozen"):
            continue
        if inside(root, came):
            return "importing the runner's dependencies imported the project's %s" % name
    if threading.active_count() > 1:
        return "importing the runner's dependencies started a thread, which a fork leaves behind"
    return None


main()
