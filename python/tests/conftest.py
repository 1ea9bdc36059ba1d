"""The numpy API's tests run against the build tree: MASKKIT_LIB (default
build/.libs/libmaskkit.so) for the binding, MASKKIT (default build/maskkit)
for the program whose outputs they are compared with."""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("MASKKIT_LIB", os.path.join(ROOT, "build", ".libs", "libmaskkit.so"))
sys.path.insert(0, os.path.join(ROOT, "python"))

PROGRAM = os.environ.get("MASKKIT") or os.path.join(ROOT, "build", "maskkit")


class Cli:
    """The built program, run in a scratch directory."""

    def __init__(self, cwd):
        self.cwd = cwd

    def run(self, *args, check=True):
        p = subprocess.run([PROGRAM] + [str(a) for a in args], cwd=self.cwd,
                           capture_output=True, text=True)
        if check and p.returncode != 0:
            raise AssertionError("maskkit %s: exit %d: %s" % (" ".join(map(str, args)),
                                                              p.returncode, p.stderr))
        return p

    def json(self, *args):
        return json.loads(self.run(*args).stdout)

    def error(self, *args):
        """The one-line message of a command that must fail with exit 2."""
        p = self.run(*args, check=False)
        assert p.returncode == 2, (args, p.returncode, p.stderr)
        line = p.stderr.strip()
        assert line.startswith("maskkit: ") and "\n" not in line, p.stderr
        return line[len("maskkit: "):]


@pytest.fixture
def cli(tmp_path):
    return Cli(tmp_path)
