printf '["local1"]' > h.json
"$MASKKIT" gen --heads-file h.json --n 8 --format h5
