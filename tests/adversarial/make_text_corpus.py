#!/usr/bin/env python3
"""Writes the malformed non-HDF5 inputs of the adversarial layer (and a few
damaged HDF5 files) into a folder: make_text_corpus.py OUTDIR.

run.py calls this at every run, into its scratch folder, so nothing here is
committed: the files are made from the code below, byte for byte the same each
time.  A file's name says its kind (the runner picks the commands by it) and
its defect:

  *.npy          mask / tensor / lengths files     *.json   mask files
  heads_*.json   --heads-file lists                *.txt    '#'/'.' mask files
  len_*.txt      lengths text files                *.csv    'maskkit sweep' CSVs
  *.h5           damaged HDF5 files (made from a valid one written with h5py)
  *.expr         one expression on one line (gen EXPR, measure EXPR)

To add an input, add a line to one of the tables below (or a function for
files that need numpy); run.py picks it up by its name.  Only files that stay
small are made (the largest is about 1 MB, written to the scratch folder)."""
import os
import struct
import sys

import numpy as np

BIG = 2 ** 40


def npy_header(header, version=(1, 0), pad=True):
    """The bytes of an npy header holding the dict text HEADER (not checked)."""
    body = header.encode("latin-1") if isinstance(header, str) else header
    if pad:
        total = 10 + len(body) + 1
        body += b" " * ((64 - total % 64) % 64) + b"\n"
    if version[0] == 1:
        return b"\x93NUMPY" + bytes(version) + struct.pack("<H", len(body)) + body
    return b"\x93NUMPY" + bytes(version) + struct.pack("<I", len(body)) + body


def hdr(descr, shape, fortran=False):
    return "{'descr': %r, 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)


def npy_files():
    """name -> bytes.  Shapes are written as text so that impossible ones fit."""
    eye = np.eye(8, dtype=np.uint8).tobytes()
    f32 = np.ones((8, 8), np.float32)
    out = {
        "empty.npy": b"",
        "bad_magic.npy": b"\x93NUMPZ\x01\x00" + npy_header(hdr("|u1", "(8, 8)"))[8:] + eye,
        "magic_only.npy": b"\x93NUMPY",
        "header_len_only.npy": b"\x93NUMPY\x01\x00\x76\x00",
        "header_len_past_end.npy": b"\x93NUMPY\x01\x00\xff\xff{'descr': '|u1'",
        "header_truncated.npy": npy_header(hdr("|u1", "(8, 8)"))[:30],
        "header_v2_len_4g.npy": b"\x93NUMPY\x02\x00\xff\xff\xff\xff{'descr': ",
        "version_9.npy": npy_header(hdr("|u1", "(8, 8)"), version=(9, 0)) + eye,
        "version_3_utf8.npy": npy_header(hdr("|u1", "(8, 8)"), version=(3, 0)) + eye,
        "header_not_dict.npy": npy_header("[1, 2, 3]") + eye,
        "header_not_python.npy": npy_header("{'descr': '|u1', 'shape': (8, 8" + "(" * 50) + eye,
        "header_missing_shape.npy": npy_header("{'descr': '|u1', 'fortran_order': False}") + eye,
        "header_missing_descr.npy": npy_header("{'fortran_order': False, 'shape': (8, 8)}") + eye,
        "header_extra_key.npy": npy_header(hdr("|u1", "(8, 8)")[:-2] + "'x': 1, }") + eye,
        "header_dup_key.npy": npy_header("{'shape': (2, 2), " + hdr("|u1", "(8, 8)")[1:]) + eye,
        "header_nul.npy": npy_header("{'descr': '|u1',\x00 'fortran_order': False, "
                                     "'shape': (8, 8), }") + eye,
        "header_non_utf8.npy": npy_header(b"{'descr': '|u1\xff\xfe', 'fortran_order': False, "
                                          b"'shape': (8, 8), }") + eye,
        "header_unpadded.npy": npy_header(hdr("|u1", "(8, 8)"), pad=False) + eye,
        "header_deep_nesting.npy": npy_header("{'descr': " + "[" * 2000 + "]" * 2000 +
                                              ", 'fortran_order': False, 'shape': (8, 8), }") + eye,
        "shape_2p40_square.npy": npy_header(hdr("|u1", f"({BIG}, {BIG})")) + eye,
        "shape_2p40_rows.npy": npy_header(hdr("|u1", f"({BIG}, 8)")) + eye,
        "shape_2p40_1d.npy": npy_header(hdr("<i8", f"({BIG},)")) + eye,
        "shape_2p40_tensor.npy": npy_header(hdr("<f4", f"({BIG}, {BIG}, 4)")) + f32.tobytes(),
        "shape_product_overflows.npy": npy_header(hdr("<f4", f"({2**32}, {2**32}, {2**32})")) + eye,
        "shape_giant_int.npy": npy_header(hdr("|u1", "(" + "9" * 400 + ", 8)")) + eye,
        "shape_negative.npy": npy_header(hdr("|u1", "(-1, 8)")) + eye,
        "shape_negative_square.npy": npy_header(hdr("|u1", "(-8, -8)")) + eye,
        "shape_zero.npy": npy_header(hdr("|u1", "(0, 0)")),
        "shape_zero_tensor.npy": npy_header(hdr("<f4", "(2, 0, 4)")),
        "shape_scalar.npy": npy_header(hdr("|u1", "()")) + b"\x01",
        "shape_float.npy": npy_header(hdr("|u1", "(8.0, 8.5)")) + eye,
        "shape_not_tuple.npy": npy_header(hdr("|u1", "'8x8'")) + eye,
        "shape_bool.npy": npy_header(hdr("|u1", "(True, True)")) + b"\x01",
        "shape_5_dims.npy": npy_header(hdr("<f4", "(1, 1, 1, 8, 8)")) + f32.tobytes(),
        "shape_33_dims.npy": npy_header(hdr("|u1", "(" + "1, " * 31 + "8, 8)")) + eye,
        "shape_non_square.npy": npy_header(hdr("|u1", "(8, 7)")) + eye[:56],
        "data_truncated.npy": npy_header(hdr("|u1", "(64, 64)")) + eye,
        "data_truncated_tensor.npy": npy_header(hdr("<f4", "(2, 8, 4)")) + f32.tobytes()[:40],
        "data_missing.npy": npy_header(hdr("<f8", "(8, 8)")),
        "data_trailing_garbage.npy": npy_header(hdr("|u1", "(8, 8)")) + eye + b"garbage" * 100,
        "fortran_order_mask.npy": npy_header(hdr("|u1", "(8, 8)", True)) + eye,
        "fortran_order_tensor.npy": npy_header(hdr("<f4", "(2, 8, 4)", True)) +
        np.arange(64, dtype=np.float32).tobytes(),
        "fortran_order_string.npy": npy_header(hdr("|u1", "(8, 8)", "'yes'")) + eye,
    }
    for tag, descr, size in (("complex", "<c16", 16), ("object", "|O", 8), ("unicode", "<U4", 16),
                             ("void", "|V8", 8), ("bytes", "|S3", 3), ("datetime", "<M8[s]", 8),
                             ("float16", "<f2", 2), ("bigendian_i8", ">i8", 8),
                             ("unknown", "<q9", 9),
                             ("structured", "[('a', '<i4'), ('b', '<f4')]", 8),
                             ("empty_descr", "", 1), ("long_double", "<f16", 16)):
        body = npy_header(hdr(descr, "(8, 8)")) if tag != "structured" else npy_header(
            "{'descr': [('a', '<i4'), ('b', '<f4')], 'fortran_order': False, 'shape': (8, 8), }")
        out[f"dtype_{tag}.npy"] = body + bytes(64 * size)
    for tag, val in (("nan", np.nan), ("inf", np.inf), ("neg_inf", -np.inf), ("huge", 3e38)):
        a = np.ones((2, 8, 4), np.float32)
        a[1, 3, 2] = val
        out[f"values_{tag}.npy"] = npy_header(hdr("<f4", "(2, 8, 4)")) + a.tobytes()
    m = np.ones((8, 8), np.float64)
    m[2, 2] = np.nan
    out["mask_with_nan.npy"] = npy_header(hdr("<f8", "(8, 8)")) + m.tobytes()
    for tag, vals, descr in (("negative", [-1, 5], "<i8"), ("zero", [0, 0], "<i8"),
                             ("2p40", [BIG, 4], "<i8"), ("float", [1.5, 4.0], "<f8"),
                             ("u64_max", [2**64 - 1, 4], "<u8"), ("bool", [True, True], "|b1")):
        out[f"lengths_{tag}.npy"] = npy_header(hdr(descr, f"({len(vals)},)")) + \
            np.array(vals, dtype=descr).tobytes()
    out["lengths_2d.npy"] = npy_header(hdr("<i4", "(2, 2)")) + np.full(4, 4, "<i4").tobytes()
    out["lengths_33_dims.npy"] = npy_header(hdr("<i4", "(" + "1, " * 32 + "2)")) + \
        np.full(2, 4, "<i4").tobytes()
    return out


def deep(n, open_, close):
    return open_ * n + close * n


JSON = {
    "empty.json": b"",
    "whitespace.json": b"  \n\t \r\n",
    "null.json": b"null",
    "number.json": b"42",
    "empty_object.json": b"{}",
    "empty_array.json": b"[]",
    "n_zero.json": b'{"n": 0, "rows": []}',
    "n_negative.json": b'{"n": -3, "rows": [[0], [1], [2]]}',
    "n_2p40.json": b'{"n": 1099511627776, "rows": [[0]]}',
    "n_giant_int.json": b'{"n": ' + b"9" * 400 + b', "rows": [[0]]}',
    "n_float.json": b'{"n": 2.5, "rows": [[0], [1]]}',
    "n_exp_overflow.json": b'{"n": 1e400, "rows": [[0]]}',
    "n_string.json": b'{"n": "2", "rows": [[0], [1]]}',
    "n_nan_literal.json": b'{"n": NaN, "rows": [[0]]}',
    "n_infinity_literal.json": b'{"n": Infinity, "rows": [[0]]}',
    "n_missing.json": b'{"rows": [[0], [1]]}',
    "rows_missing.json": b'{"n": 2}',
    "rows_too_few.json": b'{"n": 4, "rows": [[0], [1]]}',
    "rows_too_many.json": b'{"n": 1, "rows": [[0], [0], [0]]}',
    "col_out_of_range.json": b'{"n": 2, "rows": [[0, 2], [1]]}',
    "col_negative.json": b'{"n": 2, "rows": [[-1], [1]]}',
    "col_giant.json": b'{"n": 2, "rows": [[' + b"9" * 400 + b'], [1]]}',
    "col_2p63.json": b'{"n": 2, "rows": [[9223372036854775808], [1]]}',
    "col_float.json": b'{"n": 2, "rows": [[0.5], [1]]}',
    "col_string.json": b'{"n": 2, "rows": [["0"], [1]]}',
    "col_duplicate.json": b'{"n": 2, "rows": [[0, 0, 0], [1]]}',
    "row_not_array.json": b'{"n": 2, "rows": [0, 1]}',
    "rows_object.json": b'{"n": 2, "rows": {"0": [0]}}',
    "duplicate_keys.json": b'{"n": 2, "n": 3, "rows": [[0], [1]]}',
    "truncated.json": b'{"n": 4, "rows": [[0], [1',
    "trailing_garbage.json": b'{"n": 1, "rows": [[0]]} garbage',
    "two_documents.json": b'{"n": 1, "rows": [[0]]}{"n": 1, "rows": [[0]]}',
    "bom.json": b'\xef\xbb\xbf{"n": 1, "rows": [[0]]}',
    "nul_byte.json": b'{"n": 2,\x00 "rows": [[0], [1]]}',
    "nul_at_end.json": b'{"n": 1, "rows": [[0]]}\x00',
    "nul_in_string.json": b'{"n": 1, "expr": "diag\\u0000garbage", "rows": [[0]]}',
    "non_utf8.json": b'{"n": 1, "expr": "\xff\xfe\xc0\x80", "rows": [[0]]}',
    "lone_surrogate.json": b'{"n": 1, "expr": "\\ud800", "rows": [[0]]}',
    "bad_escape.json": b'{"n": 1, "expr": "\\x41", "rows": [[0]]}',
    "deep_arrays.json": deep(100000, b"[", b"]"),
    "deep_objects.json": deep(50000, b'{"a":', b"}"),
    "deep_rows.json": b'{"n": 1, "rows": ' + deep(100000, b"[", b"]") + b"}",
    "long_string.json": b'{"n": 1, "expr": "' + b"a" * 300000 + b'", "rows": [[0]]}',
    "crlf.json": b'{\r\n"n": 2,\r\n"rows": [[0], [1]]\r\n}\r\n',
}

HEADS = {
    "heads_nul_in_expr.json": b'["diag\\u0000garbage"]',
    "heads_nul_in_second.json": b'["local1", "causal\\u0000+global1"]',
    "heads_raw_nul.json": b'["diag\x00garbage"]',
    "heads_empty_list.json": b"[]",
    "heads_empty_layer.json": b"[[]]",
    "heads_empty_string.json": b'[""]',
    "heads_ragged_layers.json": b'[["local1"], ["local1", "diag"]]',
    "heads_mixed.json": b'["local1", ["diag"]]',
    "heads_three_levels.json": b'[[["local1"]]]',
    "heads_numbers.json": b"[1, 2]",
    "heads_null.json": b'["local1", null]',
    "heads_string.json": b'"local1"',
    "heads_object.json": b'{"heads": ["local1"]}',
    "heads_bad_expr.json": b'["local1", "bigbrd"]',
    "heads_deep_parens.json": b'["' + deep(100000, b"(", b")").replace(b"()", b"(diag)") + b'"]',
    "heads_long_expr.json": b'["' + b"+".join([b"local1"] * 50000) + b'"]',
    "heads_giant_param.json": b'["local(w=' + b"9" * 400 + b')"]',
    "heads_2p40_param.json": b'["random(size=1099511627776)", "strided(l=-1)"]',
    "heads_seed_overflow.json": b'["random(size=2,seed=18446744073709551616)"]',
    "heads_file_term.json": b'["/nonexistent/mask.npy", "/etc/passwd"]',
    "heads_many.json": b"[" + b", ".join([b'"diag"'] * 5000) + b"]",
    "heads_deep_lists.json": deep(100000, b"[", b"]"),
    "heads_non_utf8.json": b'["loc\xffal1"]',
    "heads_unicode.json": b'["l\xc3\xb3cal1"]',
    "heads_trailing_comma.json": b'["local1",]',
    "heads_truncated.json": b'["local1", "di',
}

TXT = {
    "empty.txt": b"",
    "newline_only.txt": b"\n",
    "blank_lines.txt": b"\n\n\n",
    "ragged_rows.txt": b"#.#\n#.\n###\n",
    "ragged_last_row.txt": b"#.\n.#\n#\n",
    "non_square.txt": b"#.#\n.#.\n",
    "one_long_row.txt": b"#" * 5000 + b"\n",
    "other_chars.txt": b"#x\n.#\n",
    "digits.txt": b"1 0\n0 1\n",
    "tabs.txt": b"#\t.\n.\t#\n",
    "nul_byte.txt": b"#\x00\n.#\n",
    "non_utf8.txt": b"#\xff\n.#\n",
    "bom.txt": b"\xef\xbb\xbf#.\n.#\n",
    "crlf_ragged.txt": b"#.\r\n.#\r\n#\r\n",
    "cr_only.txt": b"#.\r.#\r",
    "mixed_endings.txt": b"#.\n.#\r\n",
    "trailing_spaces.txt": b"#. \n.# \n",
}

LENGTHS = {
    "len_valid.txt": b"5\n8\n",
    "len_empty.txt": b"",
    "len_blank.txt": b"   \n\n",
    "len_negative.txt": b"5\n-1\n",
    "len_zero.txt": b"0\n0\n",
    "len_2p40.txt": b"1099511627776\n",
    "len_giant.txt": b"9" * 400 + b"\n",
    "len_float.txt": b"5.5\n8\n",
    "len_exponent.txt": b"1e3\n",
    "len_hex.txt": b"0x10\n",
    "len_word.txt": b"5 abc\n",
    "len_nul.txt": b"5\x00 8\n",
    "len_nul_only.txt": b"\x00" * 64,
    "len_crlf.txt": b"5\r\n8\r\n",
    "len_non_utf8.txt": b"5\n\xff\xfe\n",
    "len_plus_sign.txt": b"+5\n",
    "len_comma.txt": b"5,8\n",
    "len_long_line.txt": b"5" * 100000 + b"\n",
}

CSV_HEADER = (b"pattern,param,target,achieved,tile_density,kernel,norm,backend,dtype,n,batch,"
              b"heads,d,tile,median_s,min_s,speedup,gflops_dense,gflops_actual,max_err")
CSV_ROW = (b"local,w=4,0.5,0.516,0.5,masked,softmax,cpu,fp32,16,1,1,4,64,"
           b"1e-05,1e-05,1.2,0.1,0.05,1e-07")
CSV_DENSE = (b"dense,-,0,0,1,dense,softmax,cpu,fp32,16,1,1,4,64,"
             b"1.2e-05,1.2e-05,1,0.1,0.1,1e-07")

def csv_file(row=CSV_ROW, header=CSV_HEADER, end=b"\n", dense=CSV_DENSE):
    """A sweep CSV as 'maskkit sweep -o' writes it (dense and one pattern),
    with ROW (or HEADER) made malformed."""
    return header + end + dense + end + row + end


CSV = {
    "sweep_empty.csv": b"",
    "sweep_header_only.csv": CSV_HEADER + b"\n",
    "sweep_no_dense_row.csv": csv_file(dense=b"").replace(b"\n\n", b"\n"),
    "sweep_wrong_header.csv": b"a,b,c\n1,2,3\n",
    "sweep_missing_column.csv": csv_file(CSV_ROW.rsplit(b",", 1)[0], CSV_HEADER.rsplit(b",", 1)[0],
                                         dense=CSV_DENSE.rsplit(b",", 1)[0]),
    "sweep_short_row.csv": csv_file(b"local,w=4,0.5"),
    "sweep_nan.csv": csv_file(CSV_ROW.replace(b"1e-05,1e-05", b"nan,inf")),
    "sweep_giant_number.csv": csv_file(CSV_ROW.replace(b",16,", b"," + b"9" * 400 + b",")),
    "sweep_nul.csv": csv_file(CSV_ROW.replace(b"local", b"lo\x00cal")),
    "sweep_non_utf8.csv": csv_file(CSV_ROW.replace(b"local", b"lo\xffcal")),
    "sweep_crlf.csv": csv_file(end=b"\r\n"),
    "sweep_quotes.csv": csv_file(b'"local,"w=4",0.5' + CSV_ROW[14:]),
    "sweep_long_line.csv": csv_file(b"x" * 200000),
    "sweep_negative_time.csv": csv_file(CSV_ROW.replace(b"1e-05,1e-05", b"-1,-1")),
}


EXPR = {
    "deep_parens.expr": deep(20000, b"(", b")").replace(b"()", b"(diag)"),
    "deep_not.expr": b"~" * 100000 + b"diag",
    "long_sum.expr": b"+".join([b"local1"] * 15000),
    "giant_param.expr": b"local(w=" + b"9" * 400 + b")",
    "param_2p40.expr": b"bigbird(w=1099511627776,r=2,g=2,block=16)",
    "negative_param.expr": b"strided(l=-4)",
    "zero_block.expr": b"bigbird(w=1,r=1,g=1,block=0)",
    "nan_param.expr": b"random(size=nan)",
    "unbalanced.expr": b"((local1+diag)",
    "missing_file.expr": b"/nonexistent/dir/mask.npy",
    "dev_zero_file.expr": b"/dev/zero",
    "non_utf8.expr": b"loc\xffal1",
    "empty.expr": b"",
    "only_ops.expr": b"+&-~",
    "axis_huge_index.expr": b"axis(rows=1099511627776,cols=0,7)",
}


def hdf5_files(out):
    """Damaged copies of one valid HDF5 mask file (names say how)."""
    import h5py
    valid = os.path.join(out, "h5_valid_base.h5")
    with h5py.File(valid, "w", libver="earliest") as f:
        f["mask"] = np.eye(16, dtype=np.uint8)
    with open(valid, "rb") as fh:
        raw = fh.read()
    os.unlink(valid)
    files = {
        "h5_empty.h5": b"",
        "h5_text.h5": b"this is not an HDF5 file\n",
        "h5_signature_only.h5": raw[:8],
        "h5_superblock_only.h5": raw[:96],
        "h5_truncated_half.h5": raw[:len(raw) // 2],
        "h5_truncated_last_byte.h5": raw[:-1],
        "h5_npy_inside.h5": npy_header(hdr("|u1", "(8, 8)")) + bytes(64),
    }
    # the superblock's end-of-file address pointed far beyond the file
    eof = bytearray(raw)
    eof[40:48] = struct.pack("<Q", BIG)
    files["h5_eof_2p40.h5"] = bytes(eof)
    # a datatype declaring elements of 4 GB (the size field of the datatype
    # message patched): a mask, a float data set and lengths
    for name, data, ltype in (("h5_mask_dtype_4g.h5", np.eye(16, dtype=np.uint8), None),
                              ("h5_probs_dtype_4g.h5", np.full((2, 4, 4), 0.25, np.float32),
                               None),
                              ("h5_lengths_dtype_4g.h5", None, np.array([3, 4], np.int32))):
        path = os.path.join(out, "h5_patch_base.h5")
        with h5py.File(path, "w", libver="earliest") as f:
            if data is not None:
                f["masks" if data.dtype == np.uint8 else "probs"] = data
            else:
                f["attentions"] = np.full((2, 1, 1, 4, 4), 0.25, np.float32)
                f["lengths"] = ltype
        with open(path, "rb") as fh:
            b = bytearray(fh.read())
        os.unlink(path)
        # class/version, bit field, size, then offset and precision
        if data is not None and data.dtype == np.uint8:
            old = bytes([0x10, 0, 0, 0, 1, 0, 0, 0, 0, 0, 8, 0])
        elif data is not None:
            old = bytes([0x11, 0x20, 0x1F, 0, 4, 0, 0, 0, 0, 0, 32, 0])
        else:
            old = bytes([0x10, 0x08, 0, 0, 4, 0, 0, 0, 0, 0, 32, 0])
        at = b.find(old)
        assert at >= 0 and b.find(old, at + 1) < 0, name
        b[at + 4:at + 8] = struct.pack("<I", 0xFD000000)
        files[name] = bytes(b)
    # deterministic byte flips across the file
    for k, at in enumerate((100, 300, 600, 900, 1200, len(raw) - 40)):
        b = bytearray(raw)
        for i in range(at, min(at + 8, len(b))):
            b[i] ^= 0xA5
        files[f"h5_flipped_{k}.h5"] = bytes(b)
    return files


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    files = {}
    for table in (npy_files(), JSON, HEADS, TXT, LENGTHS, CSV, EXPR, hdf5_files(out)):
        dup = set(files) & set(table)
        assert not dup, dup
        files.update(table)
    for name, data in sorted(files.items()):
        with open(os.path.join(out, name), "wb") as fh:
            fh.write(data)
    # special files: a directory, a FIFO and a link to a device named like inputs
    os.makedirs(os.path.join(out, "special_directory.json"), exist_ok=True)
    os.makedirs(os.path.join(out, "special_directory.h5"), exist_ok=True)
    for name in ("special_fifo.npy", "special_fifo.h5", "special_fifo.json"):
        p = os.path.join(out, name)
        if not os.path.exists(p):
            os.mkfifo(p)
    for name, target in (("special_dev_zero.npy", "/dev/zero"),
                         ("special_dev_zero.txt", "/dev/zero"),
                         ("special_dev_null.json", "/dev/null"),
                         ("special_dangling.h5", "/nonexistent/target.h5")):
        p = os.path.join(out, name)
        if not os.path.lexists(p):
            os.symlink(target, p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
