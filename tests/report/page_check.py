#!/usr/bin/python3
"""Static checks of a report folder (standard library only).

Usage: page_check.py REPORT_DIR

Fails (exit 1, one line per problem) when a PNG under REPORT_DIR/figures is
over 500 KB (500000 bytes), or when a link to "#anchor" in
REPORT_DIR/index.html has no element with that id (the contents).  Unlike
browser_check.sh it needs no browser, so it runs wherever the report does.
"""
import html.parser, os, sys, urllib.parse

LIMIT = 500_000


class Anchors(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.links = set(), []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get('id'):
            self.ids.add(a['id'])
        href = a.get('href') or ''
        if tag == 'a' and href.startswith('#'):
            # a browser decodes the fragment before matching an id
            self.links.append(urllib.parse.unquote(href[1:]))


def big_pngs(folder):
    """(name, bytes) of each PNG under folder over LIMIT."""
    out = []
    for root, _, files in os.walk(folder):
        for f in sorted(files):
            if f.endswith('.png'):
                size = os.path.getsize(os.path.join(root, f))
                if size > LIMIT:
                    out.append((os.path.relpath(os.path.join(root, f), folder), size))
    return out


def dangling(index):
    """(links, anchors without a target) of an HTML page."""
    p = Anchors()
    with open(index, encoding='utf-8') as f:
        p.feed(f.read())
    return p.links, [a for a in p.links if a not in p.ids]


def main(argv):
    if len(argv) != 2:
        print('usage: page_check.py REPORT_DIR', file=sys.stderr)
        return 1
    d, bad = argv[1], 0
    for name, size in big_pngs(os.path.join(d, 'figures')):
        print('page check: %s is %d bytes, over %d' % (name, size, LIMIT))
        bad += 1
    index = os.path.join(d, 'index.html')
    if not os.path.isfile(index):
        print('page check: %s not found' % index)
        return 1
    links, lost = dangling(index)
    for a in lost:
        print('page check: the link to #%s has no target in index.html' % a)
    bad += len(lost)
    if not links:
        print('page check: index.html has no contents (no link to an anchor)')
        bad += 1
    if bad:
        return 1
    print('page check: PNGs within %d bytes, %d anchors resolve' % (LIMIT, len(links)))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
