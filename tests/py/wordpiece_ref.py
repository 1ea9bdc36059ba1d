#!/usr/bin/env python3
"""An independent BERT WordPiece tokenizer in plain Python (stdlib only), to
check maskkit's C one (src/model/wordpiece.c) against.

It follows HuggingFace's tokenizers library (BertNormalizer,
BertPreTokenizer, WordPiece, [CLS] ... [SEP]) with Python's own unicodedata
for categories, NFD and lower case:

- special tokens written in the text are matched first, in the raw text
  (leftmost, then longest);
- clean_text drops NUL, U+FFFD and categories C* but tab, LF and CR; white
  space (Unicode's White_Space property, as Rust's char::is_whitespace, not
  Python's str.isspace, which adds U+001C..U+001F) becomes a space;
- CJK ideographs (tokenizers' ranges) get spaces around them;
- strip_accents: NFD of the whole text, then Mn dropped; then lowercase,
  one character at a time (so no final-sigma rule: 'Σ' is 'σ' everywhere,
  as tokenizers does; "".lower() of a whole word would give 'ς');
- words: split at White_Space and around punctuation (ASCII punctuation and
  categories P*);
- WordPiece: greedy longest match first, "##" continuations, [UNK] for a
  word longer than max_input_chars_per_word or one that cannot be covered.

Usage as a script: wordpiece_ref.py MODEL_DIR < lines  (prints ids per line)
"""
import json
import os
import sys
import unicodedata

WHITE_SPACE = {0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2028, 0x2029,
               0x202F, 0x205F, 0x3000} | set(range(0x2000, 0x200B))

CJK = [(0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
       (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)]


def is_white(ch):
    return ord(ch) in WHITE_SPACE


def is_control(ch):
    """BertNormalizer's clean_text in the tokenizers library: control,
    format, private-use (and surrogate) characters; not the unassigned (Cn),
    which it keeps (a word holding one is [UNK])."""
    if ch in "\t\n\r":
        return False
    return unicodedata.category(ch) in ("Cc", "Cf", "Co", "Cs")


def is_cjk(ch):
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in CJK)


def is_punct(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


class Tokenizer:
    def __init__(self, vocab, unk="[UNK]", cls="[CLS]", sep="[SEP]", prefix="##",
                 max_chars=100, clean=True, chinese=True, strip=True, lower=True,
                 specials=(), max_len=512):
        self.vocab = vocab
        self.inv = {i: t for t, i in vocab.items()}
        self.unk, self.cls, self.sep = vocab[unk], vocab[cls], vocab[sep]
        self.prefix, self.max_chars = prefix, max_chars
        self.clean, self.chinese, self.strip, self.lower = clean, chinese, strip, lower
        self.specials = sorted({s for s in specials if s in vocab}, key=len, reverse=True)
        self.max_len = max_len  # the default cut: tokenizer.json's truncation, else 512

    @classmethod
    def from_dir(cls, path):
        tj = os.path.join(path, "tokenizer.json")
        with open(tj, encoding="utf-8") as f:
            j = json.load(f)
        m, n = j["model"], j.get("normalizer") or {}
        lower = n.get("lowercase", True)
        strip = n.get("strip_accents")
        specials = [a["content"] for a in j.get("added_tokens", [])]
        return cls(m["vocab"], unk=m.get("unk_token", "[UNK]"),
                   prefix=m.get("continuing_subword_prefix", "##"),
                   max_chars=m.get("max_input_chars_per_word", 100),
                   clean=n.get("clean_text", True), chinese=n.get("handle_chinese_chars", True),
                   strip=lower if strip is None else strip, lower=lower, specials=specials,
                   max_len=(j.get("truncation") or {}).get("max_length", 512))

    def normalize(self, text):
        out = []
        for ch in text:
            if self.clean:
                if ch in "\x00\ufffd" or is_control(ch):
                    continue
                if is_white(ch):
                    ch = " "
            if self.chinese and is_cjk(ch):
                out.append(" " + ch + " ")
            else:
                out.append(ch)
        s = "".join(out)
        if self.strip:
            s = "".join(c for c in unicodedata.normalize("NFD", s)
                        if unicodedata.category(c) != "Mn")
        if self.lower:
            s = "".join(c.lower() for c in s)
        return s

    @staticmethod
    def words(s):
        words, cur = [], []
        for ch in s:
            if is_white(ch):
                if cur:
                    words.append("".join(cur))
                cur = []
            elif is_punct(ch):
                if cur:
                    words.append("".join(cur))
                words.append(ch)
                cur = []
            else:
                cur.append(ch)
        if cur:
            words.append("".join(cur))
        return words

    def wordpiece(self, word):
        if len(word) > self.max_chars:
            return [self.unk]
        pieces, start = [], 0
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                sub = word[start:end]
                if start > 0:
                    sub = self.prefix + sub
                if sub in self.vocab:
                    found = self.vocab[sub]
                    break
                end -= 1
            if found is None:
                return [self.unk]
            pieces.append(found)
            start = end
        return pieces

    def segments(self, text):
        """(text, None) pieces to normalise and (None, id) special tokens."""
        out, seg, k = [], 0, 0
        while k < len(text):
            hit = next((s for s in self.specials if text.startswith(s, k)), None)
            if hit is None:
                k += 1
                continue
            out.append((text[seg:k], None))
            out.append((None, self.vocab[hit]))
            k += len(hit)
            seg = k
        out.append((text[seg:], None))
        return out

    def encode(self, text, max_len=None):
        max_len = max_len or self.max_len
        ids = []
        for seg, special in self.segments(text):
            if special is not None:
                ids.append(special)
                continue
            for w in self.words(self.normalize(seg)):
                ids.extend(self.wordpiece(w))
        full = len(ids) + 2
        return [self.cls] + ids[:max_len - 2] + [self.sep], full > max_len

    def tokens(self, ids):
        return [self.inv[i] for i in ids]


if __name__ == "__main__":
    tok = Tokenizer.from_dir(sys.argv[1])
    for line in sys.stdin.read().split("\n"):
        if line.strip(" \t"):
            print(" ".join(map(str, tok.encode(line)[0])))
