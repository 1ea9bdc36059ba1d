#!/bin/sh
# make distcheck's tests/cli (configure --enable-quick-check): every case of
# tests/cli/run-all.sh but the slow ones of tests/cli/slow.list, which the
# full make check of ./quickstart.sh check runs (tests/cli/run-slow.sh).
exec sh "$(cd "$(dirname "$0")/.." && pwd)/cli/run-all.sh"
