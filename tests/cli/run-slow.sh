#!/bin/sh
# The slow CLI cases (tests/cli/slow.list), a test of their own so that make
# check runs them beside tests/cli/run-all.sh.
exec sh "$(dirname "$0")/run-all.sh" --slow
