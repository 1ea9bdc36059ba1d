#!/bin/sh
# The cached venv the torch tests run in (tests/py/run-torch-tests.sh):
# torch, numpy and pytest from PyPI (the default wheel: it runs on a CPU,
# and no CPU-only index is reachable from CI).
#
#   tests/py/torch-venv.sh          create or update it (./quickstart.sh check)
#   tests/py/torch-venv.sh --path   print where it is, and do nothing else
#
# It lives in $MASKKIT_TORCH_VENV, else ${XDG_CACHE_HOME:-$HOME/.cache}/maskkit/torch-venv,
# made with $PYTHON (else /usr/bin/python3).  A stamp file in it names the
# packages it was made with: when that matches, nothing runs (no network, no
# torch import, which takes seconds).  A venv without the stamp is brought up
# to date with pip (packages already there are kept).  Offline, it says why
# and exits 1; a venv it was creating is removed, one that was there is left
# as it was, and the torch tests then skip (fail under MASKKIT_REQUIRE_ALL).
set -eu

PKGS="torch numpy pytest"
venv=${MASKKIT_TORCH_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/maskkit/torch-venv}
stamp=$venv/.maskkit-stamp
if [ "${1:-}" = --path ]; then
	echo "$venv"
	exit 0
fi
PY=${PYTHON:-/usr/bin/python3}
[ -x "$PY" ] || PY=python3

if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(head -1 "$stamp")" = "$PKGS" ]; then
	echo "torch venv: $venv ($(sed -n 2p "$stamp"))"
	exit 0
fi
created=
if [ ! -x "$venv/bin/python" ]; then
	echo "torch venv: creating $venv with $PY"
	mkdir -p "$(dirname "$venv")"
	if ! "$PY" -m venv "$venv" >&2; then
		echo "torch venv: '$PY -m venv' failed (Debian: apt-get install python3-venv)" >&2
		rm -rf "$venv"
		exit 1
	fi
	created=1
fi
echo "torch venv: pip install $PKGS (PyPI; a few GB the first time)"
# few retries: offline, say so in seconds rather than minutes
if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
	--retries 1 --timeout 30 $PKGS >&2; then
	echo "torch venv: pip install $PKGS into $venv failed (offline?); the torch tests will skip" >&2
	[ -n "$created" ] && rm -rf "$venv"
	exit 1
fi
# importlib.metadata reads the versions without importing torch
vers=$("$venv/bin/python" -c 'import importlib.metadata as m, sys
print(" ".join("%s %s" % (p, m.version(p)) for p in sys.argv[1:]))' $PKGS)
printf '%s\n%s\n' "$PKGS" "$vers" >"$stamp.tmp" && mv -f "$stamp.tmp" "$stamp"
echo "torch venv: $venv ($vers)"
