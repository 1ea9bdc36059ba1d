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
