#!/usr/bin/python3
"""Build fixture reports for test_browser_check.sh (standard library only).

Usage: make_fixtures.py DIR   creates DIR/good, DIR/bad and DIR/blank, each
with an index.html; good has two valid PNGs, bad adds one <img> whose file is
missing and one whose file is a corrupt PNG, blank has only an empty body.
"""
import os, struct, sys, zlib


def png(w, h, pixel):
    """An 8-bit RGB PNG whose pixel (x, y) is pixel(x, y) -> (r, g, b)."""
    def chunk(kind, body):
        return (struct.pack('>I', len(body)) + kind + body
                + struct.pack('>I', zlib.crc32(kind + body)))
    rows = b''.join(b'\0' + bytes(c for x in range(w) for c in pixel(x, y))
                    for y in range(h))
    return (b'\x89PNG\r\n\x1a\n'
            + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0))
            + chunk(b'IDAT', zlib.compress(rows)) + chunk(b'IEND', b''))


def page(imgs):
    text = ('<p>Attention mask sweep results. Each figure shows the measured '
            'error against the block size for one mask family; lower is '
            'better and the dashed line marks the dense baseline.</p>\n')
    figs = ''.join('<figure><img src="%s" alt="%s"><figcaption>%s'
                   '</figcaption></figure>\n' % (s, s, s) for s in imgs)
    return ('<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
            '<title>fixture report</title></head><body>\n'
            '<h1>maskkit fixture report</h1>\n' + text * 3 +
            '<table border="1"><tr><th>mask</th><th>error</th></tr>\n'
            '<tr><td>causal</td><td>0.012</td></tr>\n'
            '<tr><td>sliding</td><td>0.034</td></tr></table>\n'
            + figs + '</body></html>\n')


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w' if isinstance(data, str) else 'wb') as f:
        f.write(data)


def main(root):
    a = png(160, 120, lambda x, y: (x * 255 // 160, y * 255 // 120, 128))
    b = png(200, 100, lambda x, y: (255, 255, 255) if (x // 20 + y // 20) % 2
            else (200, 30, 30))
    good = ['figures/a.png', 'figures/b.png']
    for d in ('good', 'bad'):
        write(os.path.join(root, d, 'figures/a.png'), a)
        write(os.path.join(root, d, 'figures/b.png'), b)
    write(os.path.join(root, 'good/index.html'), page(good))
    write(os.path.join(root, 'bad/figures/corrupt.png'), a[:40] + b'\0' * 200)
    write(os.path.join(root, 'bad/index.html'),
          page(good + ['figures/missing.png', 'figures/corrupt.png']))
    write(os.path.join(root, 'blank/index.html'),
          '<!DOCTYPE html>\n<html><head><title>blank</title></head>'
          '<body></body></html>\n')


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
