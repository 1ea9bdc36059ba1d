#!/usr/bin/env python3
# needs: stdlib
"""README's tour, run as written (issue 31): every command of the ```sh blocks
under "## A tour in ten commands", in order, in one shell, from a stand-in
source tree (build/ and examples/ linked to the real ones) so that even the
set-up block runs unchanged.  A command that fails fails the test, naming it.

Left out, each run as written by another check that make check or CI runs
(the test fails if that check no longer holds the command):
  maskkit sweep --sparsity 10..90 [...]  about a minute each: the commissioned
                                         case runs the first; sweep_outputs
                                         the outputs' options
  maskkit report --out report --quick    quickstart check runs it, checked in
                                         a browser (tests/report/)
  mpirun -n 4 ...                        tests/mpi/run.sh (ranks, root, cores)
Without the real model (tools/fetch-model.sh) the test is skipped (77), a
failure under MASKKIT_REQUIRE_ALL=1.  `readme_tour.py --self-test` checks that
a broken command fails it.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SRCDIR = os.environ.get("SRCDIR") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILDDIR = os.environ.get("MK_BUILDDIR") or os.getcwd()

# command prefix -> (the check that runs it, a file of that check that must
# hold the command's arguments)
ELSEWHERE = [
    (r"maskkit sweep --sparsity 10\.\.90( |$)", "commissioned_sweep",
     "tests/cli/cases/commissioned_sweep.sh", "sweep --sparsity 10..90"),
    (r"maskkit report ", "quickstart check", "quickstart.sh", "report --out"),
    (r"mpirun ", "tests/mpi/run.sh", "tests/mpi/run.sh", "mpirun"),
]


def tour_blocks(readme):
    """The ```sh blocks' lines of the tour section, in order."""
    with open(readme) as fh:
        text = fh.read()
    m = re.search(r"^## A tour in ten commands\n(.*?)^## ", text, re.S | re.M)
    if not m:
        sys.exit(f"FAIL: {readme} has no '## A tour in ten commands' section")
    lines = []
    for block in re.findall(r"^```sh\n(.*?)^```", m.group(1), re.S | re.M):
        lines += [ln for ln in block.splitlines() if ln.strip()]
    return lines


def left_out(line):
    for pattern, who, path, needle in ELSEWHERE:
        if re.match(pattern, line):
            with open(os.path.join(SRCDIR, path)) as fh:
                if needle not in fh.read():
                    sys.exit(f"FAIL: '{line}' is left to {who}, but {path} no longer "
                             f"holds '{needle}'")
            return who
    return None


def script(lines):
    """One bash script: each command echoed, then run; the first failure
    names its command and stops."""
    out = ["set -u", "tour_fail() { echo \"tour: FAILED (exit $1): $2\"; exit 1; }"]
    for ln in lines:
        who = left_out(ln)
        if who:
            out.append("echo %s" % sh_quote(f"tour: left to {who}: {ln}"))
            continue
        out.append("echo %s" % sh_quote(f"tour: {ln}"))
        out.append(f"{ln}\ntour_rc=$?; [ $tour_rc -eq 0 ] || tour_fail $tour_rc {sh_quote(ln)}")
    out.append("echo 'tour: every command ran'")
    return "\n".join(out) + "\n"


def sh_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def run(lines):
    return run_script(script(lines))


def run_script(text, prefix="mk_tour"):
    """Runs a bash script from a stand-in source tree: build/, examples/ and
    python/ linked to the real ones, mktemp -d landing in a scratch folder."""
    with tempfile.TemporaryDirectory(prefix=prefix) as top:
        tree = os.path.join(top, "tree")
        scratch = os.path.join(top, "tmp")
        os.mkdir(tree)
        os.mkdir(scratch)
        os.symlink(BUILDDIR, os.path.join(tree, "build"))
        os.symlink(os.path.join(SRCDIR, "examples"), os.path.join(tree, "examples"))
        os.symlink(os.path.join(SRCDIR, "python"), os.path.join(tree, "python"))
        env = dict(os.environ, TMPDIR=scratch)  # mktemp -d lands in the scratch folder
        p = subprocess.run(["bash", "-c", text], cwd=tree, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=1200)
        return p.returncode, p.stdout


def self_test(lines):
    """A tour whose measure command is broken must fail, naming it."""
    broken = [ln.replace("maskkit measure bigbird", "maskkit measure bigbird --no-such-flag")
              for ln in lines if not ln.startswith(("maskkit encode", "maskkit tokenize"))]
    if broken == [ln for ln in lines if not ln.startswith(("maskkit encode", "maskkit tokenize"))]:
        sys.exit("FAIL: self-test: no 'maskkit measure bigbird' line to break")
    cut = broken.index(next(ln for ln in broken if "--no-such-flag" in ln)) + 1
    rc, out = run(broken[:cut])
    if rc == 0 or "FAILED" not in out or "--no-such-flag" not in out:
        sys.exit(f"FAIL: self-test: a broken command passed the tour\n{out}")
    print("self-test: a broken tour command fails the test")


def main():
    lines = tour_blocks(os.path.join(SRCDIR, "README.md"))
    model = os.path.expanduser("~/.cache/maskkit/all-MiniLM-L6-v2")
    if not os.path.isfile(os.path.join(model, "config.json")):
        print(f"skip: the tour's real model is not at {model} (tools/fetch-model.sh)")
        sys.exit(1 if os.environ.get("MASKKIT_REQUIRE_ALL") else 77)
    self_test(lines)
    rc, out = run(lines)
    print(out, end="")
    if rc:
        sys.exit(f"FAIL: README tour (exit {rc})")
    print(f"readme tour: {len(lines)} lines, every command ran or is run elsewhere")


if __name__ == "__main__":
    main()
