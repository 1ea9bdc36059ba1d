# The paths that start no thread (the version, the usages, an unknown
# command's error) skip the restart that applies the thread settings
# (mk_main_threads): it would double their start-up.  libgomp describes its
# settings once per process under OMP_DISPLAY_ENV, so a restart shows as a
# second description; a command that computes still takes it.
count() { OMP_DISPLAY_ENV=true "$@" 2>&1 >/dev/null | grep -c 'DISPLAY ENVIRONMENT BEGIN'; }
echo "--version: $(count "$MASKKIT" --version)"
echo "--help: $(count "$MASKKIT" --help)"
echo "gen --help: $(count "$MASKKIT" gen --help)"
echo "unknown: $(count "$MASKKIT" no-such-command)"
echo "patterns: $(count "$MASKKIT" patterns)"
