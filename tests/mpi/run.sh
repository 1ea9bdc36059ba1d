#!/bin/sh
# maskkit under mpirun: measure and attn-stats print byte for byte what one
# process prints, for 2, 3 and 4 ranks (independent and collective MPI-IO);
# a sweep's grid is shared and gathered; a rank that fails (its file missing,
# a damaged slab, a bad option) stops every rank with one clear message and
# never a hang (each run has a time limit).
: "${MASKKIT:?MASKKIT must point at the maskkit binary}"
if [ -z "${MPIRUN:-}" ]; then
	echo "maskkit was built without MPI (configure --with-mpi; Debian: libopenmpi-dev libhdf5-openmpi-dev openmpi-bin)"
	[ -n "${MASKKIT_REQUIRE_ALL:-}" ] && exit 1
	exit 77
fi
py=${PYTHON:-/usr/bin/python3}
if ! "$py" -c 'import numpy, h5py' 2>/dev/null; then
	echo "needs numpy and h5py (apt-get install python3-numpy python3-h5py)"
	[ -n "${MASKKIT_REQUIRE_ALL:-}" ] && exit 1
	exit 77
fi
# Under ASan, Open MPI's leaks are suppressed by library (tests/mpi/lsan.supp,
# quickstart sets it); its plugins are unloaded before the leak check, and
# only the slow unwinder walks through them to the library that called them.
# The other ranks' stderr goes to /dev/null, so the sanitizers write their
# reports to files here (san.PID), which must not exist at the end.
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
if [ -n "${ASAN_OPTIONS:-}" ]; then
	ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0:log_path=$dir/san"
	export ASAN_OPTIONS
fi
if [ -n "${UBSAN_OPTIONS:-}" ]; then
	UBSAN_OPTIONS="$UBSAN_OPTIONS:log_path=$dir/san"
	export UBSAN_OPTIONS
fi
# Open MPI refuses root unless told (CI runs as root)
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
cd "$dir" || exit 1
"$py" "$SRCDIR/tests/mpi/make_data.py" . || exit 1
pass=0 fail=0
# 2, 3 and 4 ranks; under the sanitizers (their slow unwinder, which the
# suppressions need, makes each run several times slower: 427 s for 2 and 3
# ranks on a 2-core VM) 2 only
nps="2 3 4"
[ -n "${MASKKIT_SANITIZED:-}" ] && nps="2"

ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
# mpirun NP ARGS...: with a time limit, so that a hang fails instead of waiting
mpi() {
	np=$1; shift
	timeout -k 5 120 "$MPIRUN" -n "$np" --oversubscribe "$@"
}

# same NAME ARGS...: stdout of one process and of 2, 3, 4 ranks identical,
# and identical to a maskkit built without MPI when MASKKIT_SERIAL names one
same() {
	name=$1; shift
	if ! "$MASKKIT" "$@" >"$name.1" 2>"$name.err"; then
		bad "$name: one process failed: $(head -1 "$name.err")"; return
	fi
	[ -s "$name.1" ] || { bad "$name: no output"; return; }
	if [ -n "${MASKKIT_SERIAL:-}" ]; then
		if "$MASKKIT_SERIAL" "$@" 2>/dev/null | cmp -s - "$name.1"; then ok; else
			bad "$name: the build without MPI prints something else"
		fi
	fi
	for np in $nps; do
		if mpi "$np" "$MASKKIT" "$@" >"$name.$np" 2>"$name.err"; then
			if cmp -s "$name.1" "$name.$np"; then ok; else
				bad "$name: $np ranks differ from one process"; diff "$name.1" "$name.$np" | head -5
			fi
		else
			bad "$name: $np ranks failed: $(grep maskkit "$name.err" | head -1)"
		fi
	done
}

same measure measure masks.h5
same measure_head measure masks.h5 --by head
same measure_json measure masks.h5 --json
same measure_csv measure masks.h5 --csv - --by sample
same measure_threshold measure probs.h5 --threshold 0.02 --by head
same measure_top_p measure probs16.h5 --top-p 0.9 --json
same measure_collective measure masks.h5 --json --mpi-io collective
same stats attn-stats probs.h5
same stats_json attn-stats probs.h5 --json
same stats_f16_csv attn-stats probs16.h5 --csv -
same stats_collective attn-stats probs16.h5 --json --mpi-io collective
# not shared: rank 0 alone runs them, and they print once
same pattern measure 'local2+global1' --n 64
same gen gen local1 --n 8

# files are written once, by rank 0, and equal one process's
"$MASKKIT" measure masks.h5 --png one.png >/dev/null &&
	"$MASKKIT" attn-stats probs.h5 --profile-csv one.csv >/dev/null || bad "files: one process failed"
if mpi 2 "$MASKKIT" measure masks.h5 --png two.png >/dev/null 2>&1 &&
   mpi 2 "$MASKKIT" attn-stats probs.h5 --profile-csv two.csv >/dev/null 2>&1; then
	cmp -s one.png two.png && cmp -s one.csv two.csv && ok || bad "files: 2 ranks wrote other files"
else
	bad "files: 2 ranks failed"
fi

# the sweep: the same grid, each row saying where it ran
sw="sweep --n 64 --patterns local,strided --sparsity 50%,80% --reps 1 --kernels dense,masked,csr"
"$MASKKIT" $sw -o sweep1.csv 2>/dev/null || bad "sweep: one process failed"
if mpi 2 "$MASKKIT" $sw -o sweep2.csv 2>sweep.err; then
	grep -v '^#' sweep1.csv | cut -d, -f1-7 >grid1
	grep -v '^#' sweep2.csv | cut -d, -f1-7 >grid2
	if cmp -s grid1 grid2 && grep -q '^# ranks: 2$' sweep2.csv &&
	   grep -q ',max_err,.*,noisy_vs,label,host,device$' sweep2.csv &&
	   [ "$(grep -c ",$(hostname),cpu (" sweep2.csv)" = "$(grep -vc '^#' sweep1.csv | awk '{print $1 - 1}')" ]; then
		ok
	else
		bad "sweep: 2 ranks gave another grid or no host and device"; head -20 sweep2.csv
	fi
else
	bad "sweep: 2 ranks failed: $(grep maskkit sweep.err | head -1)"
fi

# fails NAME PATTERN NP ARGS...: every rank exits non-zero (not by the time
# limit) and stderr says PATTERN once
fails() {
	name=$1 pattern=$2 np=$3; shift 3
	mpi "$np" "$@" >/dev/null 2>"$name.err"
	rc=$?
	n=$(grep -c "$pattern" "$name.err")
	if [ "$rc" = 0 ] || [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		bad "$name: exit $rc"; head -3 "$name.err"
	elif [ "$n" != 1 ]; then
		bad "$name: '$pattern' said $n times"; head -5 "$name.err"
	else
		ok
	fi
}
mkdir r0 r1
cp masks.h5 r0/data.h5
cp probs.h5 r0/probs.h5
rank='${OMPI_COMM_WORLD_RANK:-$PMIX_RANK}'
fails missing_measure "^maskkit: rank 1 of 2 (.*): 'data.h5': No such file or directory$" 2 \
	sh -c "cd r$rank && exec \"\$0\" measure data.h5" "$MASKKIT"
fails missing_stats "^maskkit: rank 1 of 2 (.*): 'probs.h5': No such file or directory$" 2 \
	sh -c "cd r$rank && exec \"\$0\" attn-stats probs.h5 --json" "$MASKKIT"
echo junk >r1/data.h5
fails not_hdf5 "^maskkit: rank 1 of 2 (.*): 'data.h5': not an HDF5 file$" 2 \
	sh -c "cd r$rank && exec \"\$0\" measure data.h5" "$MASKKIT"
# a shorter copy on rank 1's node: MPI-IO takes the size from rank 0, so
# without a check rank 1 would read zeros past its end
head -c $(($(wc -c <masks.h5) - 4000)) masks.h5 >r1/data.h5
fails short_copy "^maskkit: rank 1 of 2 (.*): 'data.h5' differs from the copy" 2 \
	sh -c "cd r$rank && exec \"\$0\" measure data.h5" "$MASKKIT"
# the odd copy on rank 0's node (of three; one byte of its data changed):
# rank 0 is named, not rank 1, whose copy is the same as rank 2's
mkdir r2 && cp masks.h5 r2/data.h5 && cp masks.h5 r1/data.h5 && cp masks.h5 r0/data.h5
printf '\007' | dd of=r0/data.h5 bs=1 seek=30000 conv=notrunc 2>/dev/null
fails odd_copy_rank0 "^maskkit: rank 0 of 3 (.*): 'data.h5' differs from the copy" 3 \
	sh -c "cd r$rank && exec \"\$0\" measure data.h5" "$MASKKIT"
cp masks.h5 r0/data.h5
cp probs.h5 r1/data.h5
fails other_data "no dataset" 2 sh -c "cd r$rank && exec \"\$0\" measure data.h5 --dataset masks" "$MASKKIT"
# every rank must run the same command line: else they would wait in
# different collectives for ever, or mix results of different options
differs="^maskkit: rank 1 of 2 (.*): its command line differs from the other ranks'"
fails bad_option "$differs" 2 \
	sh -c "[ $rank = 1 ] && set -- --bogus; exec \"$MASKKIT\" measure masks.h5 \"\$@\""
fails other_threshold "$differs" 2 \
	sh -c "t=0.01; [ $rank = 1 ] && t=0.5; exec \"$MASKKIT\" measure probs.h5 --threshold \$t"
fails other_command "$differs" 2 \
	sh -c "c=measure; [ $rank = 1 ] && c=attn-stats; exec \"$MASKKIT\" \$c probs.h5 --threshold 0.1"
fails other_command_alone "$differs" 2 \
	sh -c "[ $rank = 1 ] && exec \"$MASKKIT\" gen local1 --n 8; exec \"$MASKKIT\" measure masks.h5"
fails bad_option_all "^maskkit: measure: unknown option '--bogus'" 2 "$MASKKIT" measure masks.h5 --bogus
fails sweep_dtype "^maskkit: the cpu backend computes in fp32 or bf16, not 'fp16' (--dtype)" 2 "$MASKKIT" $sw --dtype fp16
for np in $nps; do
	fails "badslab$np" "'badslab.h5': cannot read sample 9, layer 1 of dataset '/masks'" "$np" \
		"$MASKKIT" measure badslab.h5
done
fails badslab_collective "cannot read sample 9, layer 1" 3 "$MASKKIT" measure badslab.h5 --mpi-io collective
# progress under mpirun (stderr is a pipe there), from rank 0
if mpi 2 "$MASKKIT" measure masks.h5 --progress >/dev/null 2>progress.err &&
   grep -q '23/23 samples (100%)' progress.err; then ok; else
	bad "--progress under mpirun: $(head -c 200 progress.err)"
fi
# a build without MPI refuses to run as several ranks (each would do it all)
if [ -n "${MASKKIT_SERIAL:-}" ]; then
	fails serial_build "^maskkit: started by an MPI launcher with 2 ranks, but this maskkit was built without MPI" 2 \
		"$MASKKIT_SERIAL" measure masks.h5
	MASKKIT_MPI=0 mpi 2 "$MASKKIT_SERIAL" measure masks.h5 >copies 2>/dev/null &&
		[ "$(grep -c '^sparsity' copies)" = 2 ] && ok || bad "MASKKIT_MPI=0: not 2 independent copies"
fi

# a failure leaves an existing output as it was
printf 'sentinel\n' >keep.png
fails badslab_png "cannot read sample 9" 2 "$MASKKIT" measure badslab.h5 --png keep.png
[ "$(cat keep.png)" = sentinel ] && ok || bad "badslab_png: the existing file was changed"

# the MPI layer's unit tests on 3 ranks (Check must not fork after MPI_Init)
check_par=$(dirname "$MASKKIT")/tests/check_par
if [ -x "$check_par" ]; then
	if CK_FORK=no mpi 3 "$check_par" >check_par.log 2>&1; then ok; else
		bad "check_par on 3 ranks"; tail -5 check_par.log
	fi
fi

# the SLURM example, run outside SLURM as it says (mpirun -n 2)
if OMPI_MCA_rmaps_base_oversubscribe=1 MASKKIT="$MASKKIT" DATA=probs.h5 OUT=slurm THRESHOLD=0.02 \
   SWEEP_ARGS="--n 64 --patterns local --sparsity 50% --reps 1" \
   timeout -k 5 300 bash "$SRCDIR/examples/slurm_measure.sh" >slurm.log 2>&1 &&
   "$MASKKIT" measure probs.h5 --threshold 0.02 --by head --json | cmp -s - slurm/measure.json &&
   "$MASKKIT" attn-stats probs.h5 --json | cmp -s - slurm/attn_stats.json &&
   grep -q ',host,device$' slurm/sweep.csv; then
	ok
else
	bad "examples/slurm_measure.sh"; tail -5 slurm.log
fi

for f in "$dir"/san.*; do
	[ -f "$f" ] || continue
	bad "a sanitizer reported ($f):"; head -20 "$f"
done

echo "mpi: $pass passed, $fail failed"
[ "$fail" = 0 ]
