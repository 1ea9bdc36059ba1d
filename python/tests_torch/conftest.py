"""The torch tests run against the build tree, as python/tests do: MASKKIT_LIB
(default build/.libs/libmaskkit.so) for the binding, MASKKIT (default
build/maskkit) for the program that writes flex-py files.  They need torch:
tests/py/run-torch-tests.sh runs them in the venv of tests/py/torch-venv.sh."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("MASKKIT_LIB", os.path.join(ROOT, "build", ".libs", "libmaskkit.so"))
sys.path.insert(0, os.path.join(ROOT, "python"))
