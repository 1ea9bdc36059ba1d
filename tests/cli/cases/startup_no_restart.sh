# The paths that start no thread (the version, the usages, an unknown
# command's error) never restart.  libgomp describes its settings once per
# process under OMP_DISPLAY_ENV, so a restart shows as a second description.
# A command that computes: no restart either where the program links
# libgomp.a (configure's choice: OMP_WAIT_POLICY is set in place, no shared
# libgomp in ldd's list), one restart with the shared libgomp.
count() { OMP_DISPLAY_ENV=true "$@" 2>&1 >/dev/null | grep -c 'DISPLAY ENVIRONMENT BEGIN'; }
echo "--version: $(count "$MASKKIT" --version)"
echo "--help: $(count "$MASKKIT" --help)"
echo "gen --help: $(count "$MASKKIT" gen --help)"
echo "unknown: $(count "$MASKKIT" no-such-command)"
if ldd "$MASKKIT" | grep -q 'libgomp\.so'; then want=2; else want=1; fi
got=$(count "$MASKKIT" patterns)
[ "$got" = "$want" ] && echo "patterns: as linked" || echo "patterns: $got processes, expected $want"
