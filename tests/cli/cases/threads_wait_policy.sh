# Spinning waiters steal a busy machine's CPU from the threads with work:
# maskkit runs with OpenMP waiting passively (GOMP_SPINCOUNT 0, as libgomp
# prints what it read under OMP_DISPLAY_ENV=verbose; the last print is the
# process that ran), unless the user chose a policy.  A command, not
# --version: that starts no thread, and with the shared libgomp skips the
# restart that sets it.
OMP_DISPLAY_ENV=verbose "$MASKKIT" patterns 2>&1 | grep -o "GOMP_SPINCOUNT = '[0-9]*'" | tail -1
OMP_WAIT_POLICY=active OMP_DISPLAY_ENV=verbose "$MASKKIT" patterns 2>&1 |
	grep -o "GOMP_SPINCOUNT = '[0-9]*'" | tail -1
