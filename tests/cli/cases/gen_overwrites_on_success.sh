# a successful write replaces an existing file and leaves no temporary behind
echo old > m.txt
"$MASKKIT" gen diag --n 3 -o m.txt && cat m.txt && ls
