#!/bin/sh
# make distcheck's tests/cli (configure --enable-quick-check): every case of
# tests/cli/run-all.sh except the slow ones below, which the full make check
# of ./quickstart.sh check runs (measure_every_pattern_at_1m alone takes
# minutes of CPU, more than all the other cases together; commissioned_sweep,
# the brief's full default sweep, about a minute).
slow='measure_every_pattern_at_1m commissioned_sweep'
tests=$(cd "$(dirname "$0")/.." && pwd)
set --
for case in "$tests"/cli/cases/*.sh; do
	name=$(basename "$case" .sh)
	case " $slow " in
	*" $name "*) echo "SKIP $name: slow (run by the full make check)" ;;
	*) set -- "$@" "$name" ;;
	esac
done
exec sh "$tests/cli/run-all.sh" "$@"
