"""Shared by the numpy/h5py cross-checks: a tally of checks that keeps going
after a failure, so one run reports every mismatch."""

failures = 0
passed = 0


def check(cond, what):
    global failures, passed
    if cond:
        passed += 1
    else:
        failures += 1
        print("FAIL:", what)


def summary(name):
    """Prints the tally; returns the exit status."""
    print(f"{name}: {passed} passed, {failures} failed")
    return 1 if failures else 0


def run(*args):
    """stdout of `$MASKKIT args...`; a non-zero exit ends the test with its stderr."""
    import os
    import subprocess
    import sys
    r = subprocess.run([os.environ["MASKKIT"], *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: maskkit {' '.join(args)} exited {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def run_json(*args):
    """`$MASKKIT args... --json`, parsed."""
    import json
    return json.loads(run(*args, "--json"))


def close(x, y, tol=1e-12):
    """|x - y| within tol relative to y (absolute below 1)."""
    return abs(x - y) <= tol * max(1.0, abs(y))
