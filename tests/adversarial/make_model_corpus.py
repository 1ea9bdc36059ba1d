#!/usr/bin/env python3
"""Writes the adversarial inputs of the model and tokenizer paths (issue 27)
into a folder: make_model_corpus.py OUTDIR VALID.

VALID is run.py's folder of valid fixtures (its tiny BERT, VALID/model, is
the base every damaged model folder starts from).  Made at each run, nothing
committed.  The name's extension says the kind (adv_cases.KINDS):

  *.safetensors  weights files                *.model  model folders (config.json,
  *.tok          tokenizer.json or vocab.txt           an index, shards, vocab)
  *.text         texts to tokenize and encode  *.npz    FlexAttention layouts
  *.patterns     a --patterns value for sweep (labels, plots)

The largest file is a 100 MB int32 member deflated to about 100 KB, so that
--max-memory meets an .npz whose array is bigger than its file."""
import io
import json
import os
import shutil
import struct
import sys
import zipfile

import numpy as np

BIG = 2 ** 40


# --- safetensors ---------------------------------------------------------------

def st_bytes(header, data=b"", hlen=None):
    """A safetensors file: 8-byte length (hlen, default the header's), the
    header (a dict, dumped, or raw bytes), the data."""
    h = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(h) if hlen is None else hlen) + h + data


def pe(dtype="F32", shape=(8, 4), begin=0, end=None, name="embeddings.position_embeddings.weight"):
    size = {"F32": 4, "F16": 2, "BF16": 2, "F64": 8, "I32": 4}.get(dtype, 4)
    n = int(np.prod(shape)) if all(isinstance(s, int) and 0 <= s < 2 ** 20 for s in shape) else 0
    return {name: {"dtype": dtype, "shape": list(shape),
                   "data_offsets": [begin, begin + n * size if end is None else end]}}


def safetensors_files():
    rng = np.random.default_rng(5)
    f32 = rng.standard_normal((8, 4)).astype(np.float32).tobytes()
    nan = np.full((8, 4), np.nan, np.float32)
    nan[0, 0] = np.inf
    many = {f"t{k}.position_embeddings": {"dtype": "F32", "shape": [1, 1],
                                          "data_offsets": [0, 4]} for k in range(20000)}
    return {
        "empty": b"",
        "seven_bytes": b"\x01\x00\x00\x00\x00\x00\x00",
        "hlen_2p63": st_bytes(pe(), f32, hlen=2 ** 63),
        "hlen_past_end": st_bytes(pe(), f32, hlen=10 ** 6),
        "hlen_zero": st_bytes(pe(), f32, hlen=0),
        "header_not_json": st_bytes(b"{{{ not json", f32),
        "header_array": st_bytes(b"[1, 2, 3]", f32),
        "header_nul": st_bytes(b'{"a\x00b": 1}', f32),
        "header_deep": st_bytes(b"[" * 100000 + b"]" * 100000),
        "header_duplicate_key": st_bytes(json.dumps(pe())[:-1].encode() + b", " +
                                         json.dumps(pe())[1:].encode(), f32),
        "header_trailing_garbage": st_bytes(json.dumps(pe()).encode() + b"xyz", f32),
        "dtype_unknown": st_bytes(pe("Q7"), f32),
        "dtype_i32": st_bytes(pe("I32"), f32),
        "dtype_f16": st_bytes(pe("F16"), np.ones((8, 4), np.float16).tobytes()),
        "dtype_bf16": st_bytes(pe("BF16"), b"\x80\x3f" * 32),
        "dtype_f64": st_bytes(pe("F64"), np.ones((8, 4)).tobytes()),
        "shape_negative": st_bytes(pe(shape=(-8, 4), end=128), f32),
        "shape_2p40": st_bytes(pe(shape=(BIG, BIG), end=128), f32),
        "shape_overflow": st_bytes(pe(shape=(2 ** 32, 2 ** 32, 2 ** 32), end=128), f32),
        "shape_not_list": st_bytes({"embeddings.position_embeddings.weight": {
            "dtype": "F32", "shape": "8x4", "data_offsets": [0, 128]}}, f32),
        "rank0": st_bytes(pe(shape=(), end=4), f32),
        "rank3": st_bytes(pe(shape=(2, 4, 4)), f32),
        "zero_rows": st_bytes(pe(shape=(0, 4), end=0), f32),
        "one_by_one": st_bytes(pe(shape=(1, 1)), f32[:4]),
        "offsets_past_end": st_bytes(pe(begin=0, end=10 ** 9), f32),
        "offsets_reversed": st_bytes(pe(begin=128, end=0), f32),
        "offsets_three": st_bytes({"embeddings.position_embeddings.weight": {
            "dtype": "F32", "shape": [8, 4], "data_offsets": [0, 64, 128]}}, f32),
        "offsets_wrong_size": st_bytes(pe(end=100), f32),
        "offsets_overlap": st_bytes(dict(pe(), **pe(name="x.word_embeddings.weight")), f32),
        "nan_inf": st_bytes(pe(), nan.tobytes()),
        "metadata_odd": st_bytes(dict(pe(), __metadata__={"a": [1, 2], "b": None}), f32),
        "name_long": st_bytes(pe(name="p" * 100000 + ".position_embeddings"), f32),
        "name_slash": st_bytes(pe(name="/a//b/.position_embeddings"), f32),
        "many_tensors": st_bytes(many, f32[:4]),
        "valid": st_bytes(pe(), f32),
    }


# --- model folders ----------------------------------------------------------------

def config_edits():
    """name -> config.json bytes (given the valid one as a dict)."""
    def dump(c):
        return json.dumps(c).encode()

    def with_(**kw):
        return lambda c: dump(dict(c, **kw))
    return {
        "cfg_duplicate_key": lambda c: dump(c)[:-1] + b', "hidden_size": 16}',
        "cfg_trailing": lambda c: dump(c) + b"\n}garbage",
        "cfg_array": lambda c: b"[1, 2]",
        "cfg_empty_object": lambda c: b"{}",
        "cfg_not_utf8": lambda c: dump(c)[:-1] + b', "model_type_x": "\xff\xfe"}',
        "cfg_bom": lambda c: b"\xef\xbb\xbf" + dump(c),
        "cfg_nul": lambda c: dump(c)[:-1] + b', "x": "a\\u0000b"}',
        "cfg_deep": lambda c: b'{"a": ' + b"[" * 50000 + b"]" * 50000 + b"}",
        "cfg_hidden_huge": with_(hidden_size=1e300),
        "cfg_hidden_negative": with_(hidden_size=-8),
        "cfg_hidden_string": with_(hidden_size="8"),
        "cfg_heads_3": with_(num_attention_heads=3),
        "cfg_heads_0": with_(num_attention_heads=0),
        "cfg_layers_1000": with_(num_hidden_layers=1000),
        "cfg_layers_2p40": with_(num_hidden_layers=BIG),
        "cfg_positions_2p40": with_(max_position_embeddings=BIG),
        "cfg_positions_0": with_(max_position_embeddings=0),
        "cfg_positions_1": with_(max_position_embeddings=1),
        "cfg_roberta_one_left": with_(model_type="roberta", pad_token_id=1,
                                      max_position_embeddings=3),
        "cfg_vocab_1": with_(vocab_size=1),
        "cfg_vocab_2p40": with_(vocab_size=BIG),
        "cfg_intermediate_2p40": with_(intermediate_size=BIG),
        "cfg_model_type_gpt2": with_(model_type="gpt2"),
        "cfg_model_type_number": with_(model_type=123),
        "cfg_act_unknown": with_(hidden_act="swish"),
        "cfg_eps_nan": lambda c: dump(c)[:-1] + b', "layer_norm_eps": NaN}',
        "cfg_big": lambda c: dump(dict(c, pad=["x" * 1000] * 5000)),
    }


def index(weight_map):
    return json.dumps({"metadata": {}, "weight_map": weight_map}).encode()


def model_dirs(out, valid):
    """Damaged copies of VALID/model."""
    base = os.path.join(valid, "model")
    with open(os.path.join(base, "config.json")) as fh:
        cfg = json.load(fh)
    pe_name = "embeddings.position_embeddings.weight"

    def make(name, files=None, remove=(), fifo=None):
        d = os.path.join(out, name + ".model")
        shutil.copytree(base, d)
        for f in remove:
            os.remove(os.path.join(d, f))
        for f, data in (files or {}).items():
            with open(os.path.join(d, f), "wb") as fh:
                fh.write(data)
        if fifo:
            os.mkfifo(os.path.join(d, fifo))

    for name, edit in config_edits().items():
        make(name, {"config.json": edit(cfg)})
    st = "model.safetensors"
    make("idx_outside", {st + ".index.json": index({pe_name: "../outside.safetensors"})},
         remove=[st])
    make("idx_absolute", {st + ".index.json": index({pe_name: "/etc/hostname"})}, remove=[st])
    make("idx_missing_shard", {st + ".index.json": index({pe_name: "shard-2.safetensors"})},
         remove=[st])
    make("idx_shard_is_config", {st + ".index.json": index({pe_name: "config.json"})},
         remove=[st])
    make("idx_shard_empty_name", {st + ".index.json": index({pe_name: ""})}, remove=[st])
    make("idx_not_object", {st + ".index.json": b'{"weight_map": [1, 2]}'}, remove=[st])
    make("idx_duplicate_key", {st + ".index.json": b'{"weight_map": {"a": "x", "a": "y"}}'},
         remove=[st])
    make("idx_fifo_shard", {st + ".index.json": index({pe_name: "fifo.safetensors"})},
         remove=[st], fifo="fifo.safetensors")
    make("fifo_weights", remove=[st], fifo=st)
    make("fifo_config", remove=["config.json"], fifo="config.json")
    make("fifo_vocab", remove=["vocab.txt"], fifo="vocab.txt")
    make("no_weights", remove=[st])
    make("no_config", remove=["config.json"])
    make("no_vocab", remove=["vocab.txt"])
    make("weights_truncated", {st: open(os.path.join(base, st), "rb").read()[:500]})
    make("tokenizer_json_broken", {"tokenizer.json": b'{"model": {"type": "WordPiece"'})


# --- tokenizers -----------------------------------------------------------------

def tokenizer_files(valid):
    with open(os.path.join(valid, "tokenizer.json")) as fh:
        tok = json.load(fh)
    with open(os.path.join(valid, "model", "vocab.txt"), "rb") as fh:
        vocab_txt = fh.read()
    vocab = tok["model"]["vocab"]

    def dump(t):
        return json.dumps(t).encode()

    def model(**kw):
        return dump(dict(tok, model=dict(tok["model"], **kw)))

    def top(**kw):
        return dump(dict(tok, **kw))
    added = [{"id": 4, "content": "", "special": True},
             {"id": 99, "content": "[X]", "special": True},
             {"id": 5, "content": 7}]
    return {
        "tj_not_json": b"{ this is not json",
        "tj_array": b"[]",
        "tj_no_model": top(model=None),
        "tj_bpe": model(type="BPE"),
        "tj_vocab_gap": model(vocab=dict(vocab, hello=len(vocab) + 3)),
        "tj_vocab_negative": model(vocab=dict(vocab, hello=-1)),
        "tj_vocab_huge_id": model(vocab=dict(vocab, hello=1e20)),
        "tj_vocab_float_id": model(vocab=dict(vocab, hello=4.5)),
        "tj_vocab_duplicate_id": model(vocab=dict(vocab, hello=5)),
        "tj_vocab_duplicate_key": dump(tok).replace(b'"[PAD]": 0', b'"[PAD]": 0, "[PAD]": 1'),
        "tj_vocab_empty": model(vocab={}),
        "tj_no_unk": model(vocab={k: v for k, v in vocab.items() if k != "[UNK]"}),
        "tj_unk_elsewhere": model(unk_token="[NOPE]"),
        "tj_max_chars_0": model(max_input_chars_per_word=0),
        "tj_max_chars_1e9": model(max_input_chars_per_word=1e9),
        "tj_max_chars_2": model(max_input_chars_per_word=2),
        "tj_prefix_long": model(continuing_subword_prefix="#" * 1000),
        "tj_added_odd": top(added_tokens=added),
        "tj_added_many": top(added_tokens=[{"id": 4, "content": f"[A{k}]"} for k in range(5000)]),
        "tj_post_bad_ids": top(post_processor={"type": "BertProcessing", "sep": ["[SEP]", 999],
                                               "cls": ["[CLS]", -1]}),
        "tj_post_template": top(post_processor={"type": "TemplateProcessing",
                                                "special_tokens": {"[CLS]": {"ids": []}}}),
        "tj_post_unknown": top(post_processor={"type": "ByteLevel"}),
        "tj_trunc_0": top(truncation={"max_length": 0}),
        "tj_trunc_negative": top(truncation={"max_length": -5}),
        "tj_trunc_2p40": top(truncation={"max_length": BIG}),
        "tj_trunc_string": top(truncation={"max_length": "128"}),
        "tj_normalizer_other": top(normalizer={"type": "Lowercase"}),
        "tj_strip_accents_str": top(normalizer=dict(tok["normalizer"], strip_accents="yes")),
        "tj_pretok_other": top(pre_tokenizer={"type": "Whitespace"}),
        "tj_token_100k": model(vocab=dict(vocab, **{"y" * 100000: len(vocab)})),
        "tj_vocab_50k": model(vocab=dict(vocab, **{f"w{k}": len(vocab) + k
                                                    for k in range(50000)})),
        "tj_trailing": dump(tok) + b" }",
        "tj_deep": b'{"model": ' + b"[" * 50000 + b"]" * 50000 + b"}",
        "vt_empty": b"",
        "vt_newline": b"\n",
        "vt_no_unk": vocab_txt.replace(b"[UNK]\n", b"[UNKNOWN]\n"),
        "vt_no_cls": vocab_txt.replace(b"[CLS]\n", b"[C]\n"),
        "vt_line_1mb": vocab_txt + b"z" * (1 << 20) + b"\n",
        "vt_nul": vocab_txt + b"a\x00b\n",
        "vt_crlf": vocab_txt.replace(b"\n", b"\r\n"),
        "vt_not_utf8": vocab_txt + b"\xff\xfe\n",
        "vt_duplicate": vocab_txt + b"hello\n",
        "vt_100k": vocab_txt + b"".join(b"t%d\n" % k for k in range(100000)),
    }


# --- texts -------------------------------------------------------------------------

def text_files():
    return {
        "empty": b"",
        "newlines": b"\n" * 10000,
        "spaces": b" \t " * 1000 + b"\n",
        "nul": b"hello\x00world\n\x00\x00\n",
        "not_utf8": b"hello \xff\xfe world \xc3\n",
        "overlong": b"\xc0\xaf \xe0\x80\xaf \xf0\x80\x80\xaf\n",
        "surrogates": b"a \xed\xa0\x80 b \xed\xbf\xbf\n",
        "above_10ffff": b"\xf4\x90\x80\x80 \xf7\xbf\xbf\xbf\n",
        "bom": b"\xef\xbb\xbfhello world\n",
        "cr_only": b"hello world.\rhow are you?\r" * 1000,
        "controls": bytes(range(1, 32)) * 100 + b"\n",
        "word_1mb": b"a" * (1 << 20) + b"\n",
        "punct_1mb": b"!?.," * (1 << 18) + b"\n",
        "combining_100k": "e".encode() + "\u0301".encode() * 100000 + b"\n",
        "cjk_line": "\u4e2d\u6587" .encode() * 100000 + b"\n",
        "emoji": "hello \U0001F600 \U0001F469\u200d\U0001F4BB world\n".encode() * 1000,
        "unassigned": "\u0378 \U000E0080 \uFFFF \U0010FFFF \uE000\n".encode(),
        "lines_200k": b"hello world. how are you?\n" * 200000,
        "paragraph_200k": b"hello world. " * 200000 + b"\n",
    }


# --- .npz layouts --------------------------------------------------------------------

def npz(arrays, compress=False):
    buf = io.BytesIO()
    (np.savez_compressed if compress else np.savez)(buf, **arrays)
    return buf.getvalue()


def layout(**over):
    a = {"kv_num_blocks": np.array([[[1, 1]]], np.int32),
         "kv_indices": np.array([[[[0, 1], [1, 0]]]], np.int32),
         "block_size": np.array(4, np.int32)}
    a.update(over)
    return {k: v for k, v in a.items() if v is not None}


def zip_with(members):
    """A zip of raw members {name: bytes} (stored)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def npz_files():
    good = npz(layout())
    deflated = npz(layout(), compress=True)
    corrupt = bytearray(deflated)
    corrupt[60:80] = b"\xff" * 20
    crc = bytearray(good)
    crc[200] ^= 0xff
    huge = np.zeros((1, 1, 1, 25_000_000), np.int32)  # 100 MB, deflates to ~100 KB
    return {
        "valid": good,
        "valid_deflated": deflated,
        "not_zip": b"PK\x03\x04 but no more",
        "truncated": good[: len(good) // 2],
        "deflate_corrupt": bytes(corrupt),
        "crc_flipped": bytes(crc),
        "no_kv_indices": npz(layout(kv_indices=None)),
        "float_indices": npz(layout(kv_indices=np.zeros((1, 1, 2, 2), np.float32))),
        "bool_counts": npz(layout(kv_num_blocks=np.ones((1, 1, 2), bool))),
        "two_dims": npz(layout(kv_indices=np.zeros((2, 2), np.int32))),
        "batch_2": npz(layout(kv_num_blocks=np.ones((2, 1, 2), np.int32),
                              kv_indices=np.zeros((2, 1, 2, 2), np.int32))),
        "heads_2": npz(layout(kv_num_blocks=np.ones((1, 2, 2), np.int32),
                              kv_indices=np.zeros((1, 2, 2, 2), np.int32))),
        "count_negative": npz(layout(kv_num_blocks=np.array([[[-1, 1]]], np.int32))),
        "count_too_big": npz(layout(kv_num_blocks=np.array([[[3, 1]]], np.int32))),
        "index_out_of_range": npz(layout(kv_indices=np.array([[[[7, 0], [1, 0]]]], np.int32))),
        "index_twice": npz(layout(kv_num_blocks=np.array([[[2, 1]]], np.int32),
                                  kv_indices=np.array([[[[0, 0], [1, 0]]]], np.int32))),
        "partial_and_full": npz(layout(full_kv_num_blocks=np.array([[[1, 0]]], np.int32),
                                       full_kv_indices=np.array([[[[0, 1], [0, 1]]]],
                                                                np.int32))),
        "full_without_indices": npz(layout(full_kv_num_blocks=np.array([[[1, 0]]], np.int32))),
        "block_0": npz(layout(block_size=np.array(0, np.int32))),
        "block_2p40": npz(layout(block_size=np.array(BIG, np.int64))),
        "block_triple": npz(layout(block_size=np.array([4, 4, 4], np.int32))),
        "q_len_huge": npz(layout(q_len=np.array(BIG, np.int64))),
        "kv_len_mismatch": npz(layout(kv_len=np.array(1, np.int32))),
        "fortran": npz(layout(kv_indices=np.asfortranarray(np.zeros((1, 1, 2, 2), np.int32)
                                                           .transpose(0, 1, 3, 2)))),
        "member_not_npy": zip_with({"kv_num_blocks.npy": b"hello", "kv_indices.npy": b"x",
                                    "block_size.npy": b"y"}),
        "member_dotdot": zip_with({"../kv_num_blocks.npy": b"x"}),
        "members_300": zip_with({f"m{k}.npy": b"" for k in range(300)}),
        "huge_deflated_member": npz(layout(kv_num_blocks=np.ones((1, 1, 1), np.int32),
                                           kv_indices=huge), compress=True),
    }


# --- sweep labels ---------------------------------------------------------------------

def pattern_values():
    return {
        "duplicate_label": "a=causal,a=local1",
        "duplicate_pattern": "causal,causal",
        "label_10k": "x" * 10000 + "=causal",
        "label_quotes": "a\"b'c\\d=causal,e$f@g%h=local1",
        "gnuplot_injection": "a\" ; system(\"touch pwned\") ; print \"=causal",
        "label_unicode": "\u00e9t\u00e9 \u4e2d=causal",
        "label_enhanced_text": "x_1.2-y=causal,z_{a}=local1,w_=local1",
        "label_empty": "=causal",
        "expr_empty": "a=",
        "only_equals": "=",
        "commas": ",,,",
        "label_newline": "a\nb=causal",
        "many_200": ",".join(f"p{k}=local1" for k in range(200)),
        "unknown_pattern": "a=nosuchpattern",
        "missing_file": "a=./nowhere.npy",
    }


def main():
    out, valid = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    tables = [(safetensors_files(), ".safetensors", "st_"), (text_files(), ".text", "tx_"),
              (npz_files(), ".npz", "nz_"), (tokenizer_files(valid), ".tok", "")]
    for files, ext, prefix in tables:
        for name, data in files.items():
            with open(os.path.join(out, prefix + name + ext), "wb") as fh:
                fh.write(data)
    for name, value in pattern_values().items():
        with open(os.path.join(out, "sp_" + name + ".patterns"), "w") as fh:
            fh.write(value + "\n")
    model_dirs(out, valid)


if __name__ == "__main__":
    main()
