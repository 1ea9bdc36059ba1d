#!/bin/sh
# make distcheck's tests/cli (configure --enable-quick-check): what a build
# from the tarball must show, in seconds, beside the unit tests: the
# commissioned command lines, gen, --help and --version, a small sweep and
# the examples (which read the installed data's layout).  Every case runs in
# ./quickstart.sh check's full make check; a tarball that lacks a case's
# file cannot happen (tests/cli is in EXTRA_DIST whole).  Running all 430
# here took a third of make distcheck's 180 s.
exec sh "$(cd "$(dirname "$0")/.." && pwd)/cli/run-all.sh" 'commissioned_gen_*' \
	'commissioned_toeplitz' 'gen_*' 'help*' 'version*' 'sweep_tiny' 'examples_*'
