# a file without 'rows'/'row': the error lists what it holds
. "$(dirname "$0")/../lib.sh"
"$MASKKIT" gen local2 -n 4 -o m.h5 || exit 1
"$MASKKIT" axis m.h5
