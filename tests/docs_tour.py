#!/usr/bin/env python3
# needs: stdlib
"""The docs pages' commands, run as written (issue 31): every line of every
```sh block of docs/*.md, page by page, in order, in one shell per page, from
a stand-in source tree (build/ and examples/ linked to the real ones) after the
set-up block of docs/index.md ("Running the pages' commands"), each page in a
scratch folder of its own.  A command that fails fails the test, naming its
page and the command.

Left out, each with the check that runs it instead (the test fails if that
check no longer holds the command):
  docs/build.md    the build itself: quickstart.sh and distcheck configure and
                   make; tests/install/run.sh builds the demo with pkg-config
  docs/cuda.md     needs a GPU: tests/gpu/device_check.sh, on the device
  docs/mpi.md      mpirun and SLURM: tests/mpi/run.sh
  maskkit sweep --sparsity 10..90   the commissioned case (about a minute)
  maskkit report ...                the report's checks (quickstart check
                                    builds it and loads it in a browser)
And one line no check can run: position.md's recipe that converts a PyTorch
checkpoint of the user's own (it needs torch and that file).
Without the real model (tools/fetch-model.sh) the test is skipped (77), a
failure under MASKKIT_REQUIRE_ALL=1.  `docs_tour.py --self-test` runs only
the check that a broken command fails it.
"""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from readme_tour import SRCDIR, run_script, sh_quote  # noqa: E402

PAGES_ELSEWHERE = {
    "build.md": ("quickstart.sh, distcheck and tests/install/run.sh",
                 "tests/install/run.sh", "pkg-config"),
    "cuda.md": ("tests/gpu/device_check.sh on a GPU", "tests/gpu/device_check.sh",
                "check_cuda"),
    "mpi.md": ("tests/mpi/run.sh", "tests/mpi/run.sh", "mpirun"),
}
LINES_ELSEWHERE = [
    (r"maskkit sweep --sparsity 10\.\.90( |$)", "commissioned_sweep",
     "tests/cli/cases/commissioned_sweep.sh", "sweep --sparsity 10..90"),
    (r"maskkit report ", "the report's checks", "quickstart.sh", "report --out"),
]
CANNOT_RUN = [
    (r"python3 -c \"import torch, safetensors", "needs torch and a PyTorch checkpoint "
     "of your own (pytorch_model.bin)"),
]


def sh_lines(path):
    with open(path) as fh:
        text = fh.read()
    lines = []
    for block in re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M):
        lines += [ln for ln in block.splitlines() if ln.strip()]
    return lines


def holds(path, needle):
    with open(os.path.join(SRCDIR, path)) as fh:
        return needle in fh.read()


def why_not_here(line):
    for pattern, who, path, needle in LINES_ELSEWHERE:
        if re.match(pattern, line):
            if not holds(path, needle):
                sys.exit(f"FAIL: '{line}' is left to {who}, but {path} no longer holds '{needle}'")
            return f"left to {who}"
    for pattern, why in CANNOT_RUN:
        if re.match(pattern, line):
            return f"not run: {why}"
    return None


def script(page, setup, lines):
    out = ["set -u", "tour_fail() { echo \"docs tour: FAILED (exit $1) in %s: $2\"; exit 1; }" % page]
    for ln in setup + lines:
        why = why_not_here(ln)
        if why:
            out.append("echo %s" % sh_quote(f"docs tour: {why}: {ln}"))
            continue
        out.append("echo %s" % sh_quote(f"docs tour: {ln}"))
        out.append(f"{ln}\ntour_rc=$?; [ $tour_rc -eq 0 ] || tour_fail $tour_rc {sh_quote(ln)}")
    return "\n".join(out) + "\n"


def run_page(page, setup, lines):
    return run_script(script(page, setup, lines), prefix="mk_docs")


def pages():
    """(page, its lines) of every page that runs here; the others checked."""
    out = []
    for path in sorted(glob.glob(os.path.join(SRCDIR, "docs", "*.md"))):
        page = os.path.basename(path)
        lines = sh_lines(path)
        if page == "index.md" or not lines:
            continue
        if page in PAGES_ELSEWHERE:
            who, check, needle = PAGES_ELSEWHERE[page]
            if not holds(check, needle):
                sys.exit(f"FAIL: docs/{page} is left to {who}, but {check} no longer "
                         f"holds '{needle}'")
            print(f"docs tour: docs/{page} left to {who}")
            continue
        out.append((page, lines))
    return out


def self_test(setup, all_pages):
    """A page whose command is broken must fail the tour, naming it."""
    page, lines = next((p, ls) for p, ls in all_pages if p == "datasets.md")
    needle = "maskkit measure attn.h5 --threshold"
    if not any(needle in ln for ln in lines):
        sys.exit(f"FAIL: self-test: docs/{page} has no '{needle}' line to break")
    cut = next(i for i, ln in enumerate(lines) if needle in ln) + 1
    broken = [ln.replace(needle, needle.replace("--threshold", "--no-such-flag --threshold"))
              for ln in lines[:cut]]
    rc, out = run_page(page, setup, broken)
    if rc == 0 or "FAILED" not in out or "--no-such-flag" not in out:
        sys.exit(f"FAIL: self-test: a broken docs command passed the tour\n{out}")
    print("self-test: a broken docs command fails the test")


def main():
    setup = sh_lines(os.path.join(SRCDIR, "docs", "index.md"))
    if not setup:
        sys.exit("FAIL: docs/index.md has no set-up block")
    model = os.path.expanduser("~/.cache/maskkit/all-MiniLM-L6-v2")
    if not os.path.isfile(os.path.join(model, "config.json")):
        print(f"skip: the pages' real model is not at {model} (tools/fetch-model.sh)")
        sys.exit(1 if os.environ.get("MASKKIT_REQUIRE_ALL") else 77)
    all_pages = pages()
    self_test(setup, all_pages)
    if sys.argv[1:] == ["--self-test"]:
        return
    failed = []
    for page, lines in all_pages:
        rc, out = run_page(page, setup, lines)
        print(out, end="")
        if rc:
            failed.append(page)
    if failed:
        sys.exit(f"FAIL: docs tour: {', '.join(failed)}")
    print(f"docs tour: {len(all_pages)} pages, every command ran or is run elsewhere")


if __name__ == "__main__":
    main()
