printf '["local1"]' > h.json
"$MASKKIT" gen local2 --heads-file h.json --n 8 -o s.h5
