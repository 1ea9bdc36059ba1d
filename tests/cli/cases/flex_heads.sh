# --heads-file to a .npz: one layout with H = 2 (causal, local1) at n = 10 in
# blocks of 4; rows after a count are padded with the other blocks, ascending
printf '%s\n' '["causal", "local1"]' > h.json
"$MASKKIT" gen --heads-file h.json --n 10 --block 4 --format flex -o s.npz || exit 1
"${PYTHON:-/usr/bin/python3}" -c '
import struct, zipfile
z = zipfile.ZipFile("s.npz")
for name in ("kv_num_blocks", "kv_indices", "full_kv_num_blocks", "block_size"):
    data = z.read(name + ".npy")
    hlen = struct.unpack("<H", data[8:10])[0]
    head = data[10:10 + hlen].decode().strip()
    body = data[10 + hlen:]
    shape = head[head.index("("):head.index(")") + 1]
    print(name, shape, list(struct.unpack("<%di" % (len(body) // 4), body)))'
