# A P whose P[0,0] is far above every other entry (as in trained models):
# with the default colour range (p1) the heatmap is not almost all one
# colour; with --range minmax it is.  The PNG (8-bit, palette) is decoded
# with zlib alone.
. "$(dirname "$0")/../lib.sh"
need_numpy_h5py
"$py" -c '
import numpy as np, h5py
n, d = 300, 32
i = np.arange(n)[:, None]
k = np.arange(d // 2)[None, :]
f = 1.0 / 10000 ** (2 * k / d)
e = np.concatenate([np.sin(i * f), np.cos(i * f)], axis=1)
e[0] *= 40   # P[0,0] = 1600 times the diagonal elsewhere
with h5py.File("emb.h5", "w") as h:
    h["position_embeddings"] = e
' || exit 1
"$MASKKIT" toeplitz emb.h5 --png robust.png > /dev/null || exit 1
"$MASKKIT" toeplitz emb.h5 --png flat.png --range minmax > /dev/null || exit 1
"$py" - <<'PY'
import struct, sys, zlib
from collections import Counter

def read_png(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, plte = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype == 3, "8-bit palette expected"
        elif kind == b"PLTE":
            plte = [body[3 * q:3 * q + 3] for q in range(n // 3)]
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    assert plte, "no palette"
    raw, stride, rows, prev = zlib.decompress(idat), w, [], bytearray(w)
    for y in range(h):
        ft, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - 1] if x >= 1 else 0
            b, c = prev[x], prev[x - 1] if x >= 1 else 0
            if ft == 1: line[x] = (line[x] + a) & 255
            elif ft == 2: line[x] = (line[x] + b) & 255
            elif ft == 3: line[x] = (line[x] + (a + b) // 2) & 255
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(b"".join(plte[i] for i in line))
        prev = line
    return w, h, rows

def dominant(path):
    w, h, rows = read_png(path)
    # the panel of docs/pictures.md: n = 300, left margin 49, title 39 + top 8
    x0, y0, n = 49, 47, 300
    assert (w, h) == (49 + n + 158, 39 + 8 + n + 31), (w, h)
    c = Counter(rows[y][3 * x:3 * x + 3] for y in range(y0, y0 + n) for x in range(x0, x0 + n))
    return c.most_common(1)[0][1] / n / n

robust, flat = dominant("robust.png"), dominant("flat.png")
if not (robust < 0.1 and flat > 0.9):
    sys.exit("most common colour: %.3f with p1, %.3f with minmax" % (robust, flat))
print("ok")
PY
