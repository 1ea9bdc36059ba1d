#!/usr/bin/env python3
# needs: stdlib
"""The floors of the source tree, checked on the compiled symbols (issue 28).

HACKING.md lists the folders from the top floor down between the markers
<!-- floors --> and <!-- /floors -->, a line each: "NAME FOLDER/ ..." (the
first word ending in '/' is the folder, the word before it its name).  A folder
may call only the floors below it.  This reads every object of the library
and of the program (MK_FLOORS_OBJECTS: the Makefile's object lists, .lo or
.o, relative to MK_BUILDDIR), asks `nm` what each defines and what it calls,
and fails on
  - a call from an object to a symbol defined on its own floor's folder's
    level or above, in another folder ("upward": the order is broken), and
  - any cycle between folders (which an upward call always makes visible,
    but is named as such: the folders that call each other round), and
  - a call from the program (src/cli, src/report) to a library symbol that
    libmaskkit.sym (the installed library's exports) does not hold.
An include proves little here (a header may declare what no one calls, and
the public headers are open to every floor), so the symbols decide.  `floors.py --self-test` first runs the
check on a made-up tree with an upward call and a cycle and must see both;
make check runs both.  Exit 0, or 1 with each offending call listed.
"""
import os
import re
import subprocess
import sys
from collections import defaultdict

SRCDIR = os.environ.get("SRCDIR") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILDDIR = os.environ.get("MK_BUILDDIR") or os.getcwd()


def floors(hacking):
    """[(name, folder)] from the top floor down, as HACKING.md lists them."""
    with open(hacking) as fh:
        text = fh.read()
    m = re.search(r"<!-- floors -->(.*?)<!-- /floors -->", text, re.S)
    if not m:
        sys.exit(f"FAIL: {hacking} has no <!-- floors --> list")
    found = []
    for line in m.group(1).splitlines():
        parts = line.split()
        # "[top|ground|'|'] NAME FOLDER/ what it holds"
        at = next((k for k, t in enumerate(parts) if k > 0 and t.endswith("/")), None)
        if at is not None:
            found.append((parts[at - 1], parts[at].rstrip("/")))
    return found


def object_file(path):
    """The object a libtool .lo names (its PIC object), or the .o itself."""
    if not path.endswith(".lo"):
        return path
    with open(path) as fh:
        for line in fh:
            m = re.match(r"pic_object='(.*)'", line.strip()) or \
                re.match(r"non_pic_object='(.*)'", line.strip())
            if m and m.group(1) != "none":
                return os.path.join(os.path.dirname(path), m.group(1))
    return None


def symbols(obj):
    """(defined, called) global symbols of an object, from nm."""
    out = subprocess.run(["nm", "-g", obj], capture_output=True, text=True, check=True).stdout
    defined, called = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            called.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRGSVWC":
            defined.add(parts[2])
    return defined, called


def folder_of(path, folders):
    """The floor folder an object belongs to (its path names the folder)."""
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(BUILDDIR))
    for folder in sorted(folders, key=len, reverse=True):
        if rel == folder or rel.startswith(folder + "/"):
            return folder
    return None


def cycles(edges):
    """The strongly connected groups of more than one folder (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def check(order, objects):
    """order: [folder] top floor first; objects: {name: (folder, defined,
    called)}.  Returns (problems, edges {folder: {folder: count}})."""
    rank = {f: len(order) - k for k, f in enumerate(order)}  # higher = upper floor
    owner = {}
    for name, (folder, defined, _) in objects.items():
        for s in defined:
            owner.setdefault(s, (folder, name))
    problems, edges = [], defaultdict(lambda: defaultdict(int))
    for name, (folder, _, called) in sorted(objects.items()):
        for s in sorted(called):
            if s not in owner or owner[s][0] == folder:
                continue
            to, where = owner[s]
            edges[folder][to] += 1
            if rank[to] >= rank[folder]:
                problems.append(f"{name} ({folder}) calls {s} of {where} ({to}), "
                                f"a floor not below it")
    for group in cycles({f: set(t) for f, t in edges.items()}):
        problems.append("a cycle between folders: " + " <-> ".join(group))
    return problems, edges


# The program calls only what libmaskkit.sym exports (the functions the
# public headers declare), so it is a user of the library a C caller gets.
PROGRAM = ("src/cli", "src/report")


def program_unexported(objects, exported):
    """The program's calls to library symbols the library does not export."""
    lib = {s for folder, defined, _ in objects.values() if folder not in PROGRAM
           for s in defined}
    used = {s for folder, _, called in objects.values() if folder in PROGRAM for s in called
            if s in lib and s not in exported}
    return [f"the program calls {s}, which libmaskkit does not export (make it public API "
            f"or move it into the program)" for s in sorted(used)]


def self_test():
    """An upward call and a cycle in a made-up tree must both be found."""
    order = ["top", "mid", "low"]
    objects = {"low/a.o": ("low", {"low_f"}, {"top_g"}),
               "mid/b.o": ("mid", {"mid_f"}, {"low_f"}),
               "top/c.o": ("top", {"top_g"}, {"mid_f", "low_f"})}
    problems, _ = check(order, objects)
    upward = [p for p in problems if "calls top_g" in p and "not below it" in p]
    cycle = [p for p in problems if p.startswith("a cycle") and "low" in p and "top" in p]
    clean, _ = check(order, {k: v for k, v in objects.items() if k != "low/a.o"})
    # the program calling a symbol the library keeps to itself
    prog = {"src/cli/m.o": ("src/cli", set(), {"lib_hidden", "lib_public"}),
            "src/core/l.o": ("src/core", {"lib_hidden", "lib_public"}, set())}
    hidden = program_unexported(prog, {"lib_public"})
    if not upward or not cycle or clean or len(hidden) != 1 or "lib_hidden" not in hidden[0]:
        print("FAIL: the self-test's upward call, cycle or unexported call was not found, or "
              f"a clean tree was refused: {problems} / {clean} / {hidden}")
        return False
    print("self-test: an upward call, a cycle and the program's call to an unexported symbol "
          "in made-up trees are found")
    return True


def main():
    if not self_test():
        return 1
    order = floors(os.path.join(SRCDIR, "HACKING.md"))
    folders = [f for _, f in order]
    listed = os.environ.get("MK_FLOORS_OBJECTS", "").split()
    if not listed:
        print("SKIP: MK_FLOORS_OBJECTS is empty (run through make check)")
        return 77
    objects, missing = {}, []
    for path in listed:
        full = os.path.join(BUILDDIR, path)
        obj = object_file(full) if os.path.exists(full) else None
        if not obj or not os.path.exists(obj):
            missing.append(path)
            continue
        folder = folder_of(full, folders)
        if folder is None:
            missing.append(path + " (in no floor of HACKING.md)")
            continue
        defined, called = symbols(obj)
        objects[path] = (folder, defined, called)
    problems, edges = check(folders, objects)
    problems += [f"{m}: not found (build first)" for m in missing]
    sym = os.path.join(BUILDDIR, "libmaskkit.sym")
    if os.path.exists(sym):
        with open(sym) as fh:
            problems += program_unexported(objects, set(fh.read().split()))
    else:
        problems.append(f"{sym}: not found (make builds it)")
    for folder in folders:
        if edges.get(folder):
            calls = ", ".join(f"{t} {n}" for t, n in sorted(edges[folder].items()))
            print(f"{folder} calls {calls}")
    for p in problems:
        print("FAIL:", p)
    print(f"floors: {len(objects)} objects in {len(folders)} floors, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
