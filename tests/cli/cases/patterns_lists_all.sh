"$MASKKIT" patterns --json | /usr/bin/python3 -c '
import json, sys
print(" ".join(p["name"] for p in json.load(sys.stdin)))'
