#!/bin/sh
# browser_check.sh REPORT_DIR [SCREENSHOT.png]
#
# Headless-browser check of an HTML report: loads REPORT_DIR/index.html in
# Debian's chromium (headless, no display needed) and fails unless every <img>
# loaded (complete && naturalWidth > 0), the page has >100 characters of body
# text, and a screenshot of it is not a single colour.  Static checks cannot
# tell whether a browser really renders the figures; this can.  The work is
# done by browser_probe.py, which drives chromium over --remote-debugging-pipe
# (DevTools protocol, python standard library only).
#
# Default screenshot: REPORT_DIR/../report-screenshot.png.
# Exit 0 pass, 1 fail, 77 skip when chromium is missing (unless
# MASKKIT_REQUIRE_ALL is non-empty, then missing chromium is a failure).
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 REPORT_DIR [SCREENSHOT.png]" >&2
    exit 1
fi
dir=$1
shot=${2:-$(cd "$dir/.." 2>/dev/null && pwd)/report-screenshot.png}

if [ ! -x "$CHROMIUM" ]; then
    echo "browser check: chromium not installed (apt-get install chromium)"
    [ -n "$MASKKIT_REQUIRE_ALL" ] && exit 1
    exit 77
fi
if [ ! -f "$dir/index.html" ]; then
    echo "browser check: $dir/index.html not found"
    exit 1
fi

here=$(cd "$(dirname "$0")" && pwd)
profile=$(mktemp -d "${TMPDIR:-/tmp}/browser_check.XXXXXX") || exit 1
trap 'rm -rf "$profile"' EXIT
trap 'exit 1' HUP INT TERM

/usr/bin/python3 "$here/browser_probe.py" "$CHROMIUM" "$profile" \
    "$dir/index.html" "$shot"
