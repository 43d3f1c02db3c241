#!/usr/bin/env python3
# seed-bug.py: makes one buggy copy of a program in the repair benchmark corpus. It copies
# testdata/corpus/PROGRAM/ to DEST and applies the one-line bug ID of testdata/corpus/bugs.tsv
# (the first occurrence of `find` in line `line` of `file` becomes `replace`), so that a repair
# run starts from a known bug whose fix is known, while the corpus keeps only correct programs.
#
# Usage: scripts/seed-bug.py ID DEST    (DEST must not exist; prints nothing on success)
#        scripts/seed-bug.py --list     (the bug ids, one per line)
import os
import shutil
import signal
import sys

CORPUS = os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "testdata", "corpus")
COLUMNS = ["id", "program", "file", "line", "find", "replace", "class", "covered"]
USAGE = "usage: seed-bug.py ID DEST | seed-bug.py --list"


def die(message):
    print(f"seed-bug: {message}", file=sys.stderr)
    sys.exit(1)


def load_bugs():
    """The rows of bugs.tsv as dicts. Split on tabs, not parsed as CSV: quotes are literal."""
    path = os.path.join(CORPUS, "bugs.tsv")
    try:
        with open(path, encoding="utf-8", newline="") as f:
            lines = f.read().split("\n")
    except OSError as e:
        die(f"cannot read {path}: {e.strerror}")
    if lines[0].split("\t") != COLUMNS:
        die(f"{path}: the header is not {' '.join(COLUMNS)}")
    bugs = []
    for number, line in enumerate(lines[1:], start=2):
        if not line:
            continue
        fields = line.split("\t")
        if len(fields) != len(COLUMNS):
            die(f"{path}:{number}: {len(fields)} fields, expected {len(COLUMNS)}")
        bugs.append(dict(zip(COLUMNS, fields)))
    return bugs


def seed(bug, dest):
    source = os.path.join(CORPUS, bug["program"])
    if not os.path.isdir(source):
        die(f"{bug['id']}: no program directory {source}")
    target = os.path.join(source, bug["file"])
    with open(target, encoding="utf-8", newline="") as f:
        lines = f.read().split("\n")
    number = int(bug["line"])
    if not 1 <= number <= len(lines):
        die(f"{bug['id']}: {bug['file']} has no line {number}")
    line = lines[number - 1]
    if bug["find"] not in line:
        die(f"{bug['id']}: {bug['find']!r} does not occur in {bug['file']}:{number}: {line.strip()!r}")
    lines[number - 1] = line.replace(bug["find"], bug["replace"], 1)
    shutil.copytree(source, dest)
    with open(os.path.join(dest, bug["file"]), "w", encoding="utf-8", newline="") as f:
        f.write("\n".join(lines))


def main(args):
    if args == ["--list"]:
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet when piped into head
        for bug in load_bugs():
            print(bug["id"])
        return
    if len(args) != 2 or args[0].startswith("-"):
        print(USAGE, file=sys.stderr)
        sys.exit(2)
    bug_id, dest = args
    if os.path.lexists(dest):
        die(f"{dest} exists already")
    found = [bug for bug in load_bugs() if bug["id"] == bug_id]
    if not found:
        die(f"no bug {bug_id!r} in bugs.tsv (see --list)")
    seed(found[0], dest)


if __name__ == "__main__":
    main(sys.argv[1:])
