# gen -o FILE.py writes a mask_mod source that Python compiles, names the
# mask it is, and goes to stdout with --format flex-py; the mask_mod itself
# is checked against the cells in python/tests/test_flex_numpy.py and with
# torch in python/tests_torch/
py=${PYTHON:-/usr/bin/python3}
"$MASKKIT" gen '(local2+global1)&causal' --q-len 5 --kv-len 9 -o mod.py --json >s.json || exit 1
grep -E '"(output|format)"' s.json
"$py" -m py_compile mod.py && rm -rf __pycache__ || exit 1
grep -E '^(EXPR|Q_LEN|KV_LEN|ALIGN) =' mod.py
"$MASKKIT" gen causal --n 4 --format flex-py | grep -c 'def mask_mod'
