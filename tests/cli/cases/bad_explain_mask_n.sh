. "$(dirname "$0")/../npy.sh"
"$MASKKIT" gen local1 --n 8 -o m.txt || exit 1
npy q.npy "<f4" "(10, 4)" 160; cp q.npy k.npy
"$MASKKIT" explain --q q.npy --k k.npy --mask m.txt
