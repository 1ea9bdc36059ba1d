#!/usr/bin/python3
"""Drive headless chromium over the DevTools protocol to check an HTML report.

Helper for browser_check.sh (standard library only).  Chromium is started with
--remote-debugging-pipe: commands go to its fd 3 and replies come from its fd 4
as NUL-terminated JSON, so no websocket library is needed.  The page is loaded
from file://, every <img> is asked for `complete && naturalWidth > 0`, the body
text length is measured, and a PNG screenshot is captured, decoded with zlib
and required not to be a single colour.

Usage: browser_probe.py CHROMIUM PROFILE_DIR INDEX_HTML SCREENSHOT_PNG
Exit 0 when the page passes, 1 on any failure (check failed, browser crash
or timeout).
"""
import array, base64, collections, json, os, pathlib, select, signal, struct
import subprocess, sys, time, zlib

WIDTH, MAX_HEIGHT = 1280, 8000   # screenshot size in CSS px (height capped)
DEADLINE = 110                   # seconds; chromium itself runs under timeout 120

PROBE_JS = r"""(async () => {
  const imgs = Array.from(document.images);
  for (const i of imgs) if (i.loading === 'lazy') i.loading = 'eager';
  await Promise.race([
    Promise.all(imgs.map(i => i.complete ? 0 : new Promise(r => {
      i.addEventListener('load', r); i.addEventListener('error', r); }))),
    new Promise(r => setTimeout(r, 10000))]);
  return {text: document.body ? document.body.innerText.trim().length : 0,
          images: imgs.map(i => ({src: i.getAttribute('src') || i.currentSrc,
                                  ok: i.complete && i.naturalWidth > 0}))};
})()"""


class BrowserError(Exception):
    pass


class Cdp:
    def __init__(self, chromium, profile, log):
        cmd_r, self.cmd_w = os.pipe()     # we write, chromium reads its fd 3
        self.res_r, res_w = os.pipe()     # chromium writes its fd 4, we read

        def fds():
            a, b = os.dup(cmd_r), os.dup(res_w)
            os.dup2(a, 3)
            os.dup2(b, 4)
        args = ['timeout', '120', chromium, '--headless', '--no-sandbox',
                '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run',
                '--no-default-browser-check', '--hide-scrollbars',
                '--mute-audio', '--disable-background-networking',
                '--disable-component-update', '--remote-debugging-pipe',
                '--user-data-dir=' + profile,
                '--window-size=%d,1024' % WIDTH, 'about:blank']
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL,
                                     stdout=log, stderr=log, close_fds=False,
                                     preexec_fn=fds)
        os.close(cmd_r)
        os.close(res_w)
        self.buf, self.events, self.next_id = b'', [], 0
        self.end = time.monotonic() + DEADLINE

    def _read_msg(self):
        while b'\0' not in self.buf:
            left = self.end - time.monotonic()
            if left <= 0:
                raise BrowserError('timed out after %ds' % DEADLINE)
            if select.select([self.res_r], [], [], left)[0]:
                chunk = os.read(self.res_r, 1 << 20)
                if not chunk:
                    raise BrowserError('chromium exited (status %s)'
                                       % self.proc.poll())
                self.buf += chunk
        msg, self.buf = self.buf.split(b'\0', 1)
        return json.loads(msg)

    def send(self, method, session=None, **params):
        self.next_id += 1
        msg = {'id': self.next_id, 'method': method, 'params': params}
        if session:
            msg['sessionId'] = session
        os.write(self.cmd_w, json.dumps(msg).encode() + b'\0')
        while True:
            reply = self._read_msg()
            if reply.get('id') == self.next_id:
                if 'error' in reply:
                    raise BrowserError('%s: %s' % (method, reply['error']))
                return reply['result']
            self.events.append(reply)

    def wait_event(self, method, session):
        while True:
            for ev in self.events:
                if ev.get('method') == method and ev.get('sessionId') == session:
                    self.events.remove(ev)
                    return ev
            self.events.append(self._read_msg())

    def close(self):
        try:
            os.write(self.cmd_w, b'{"id":999999,"method":"Browser.close"}\0')
            self.proc.wait(5)
            return
        except (OSError, subprocess.TimeoutExpired):
            pass
        self.proc.terminate()   # timeout(1) passes it on to chromium's group
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:   # timeout(1) leads its own group
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def png_pixels(data):
    """Decode an 8-bit non-interlaced RGB/RGBA PNG; return (w, h, bpp, raw)."""
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        raise ValueError('not a PNG')
    pos, idat, hdr = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b'IHDR':
            hdr = struct.unpack('>IIBBBBB', body)
        elif kind == b'IDAT':
            idat.append(body)
        elif kind == b'IEND':
            break
    w, h, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError('unsupported PNG (depth %d, colour type %d)'
                         % (depth, ctype))
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(b''.join(idat)), w * bpp
    if len(raw) < h * (stride + 1):
        raise ValueError('truncated PNG data')
    out, prev = bytearray(), bytearray(stride)
    m7 = int.from_bytes(b'\x7f' * stride, 'little')
    m8 = int.from_bytes(b'\x80' * stride, 'little')
    for y in range(h):
        f, row = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:
                                                      (y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                row[i] = (row[i] + row[i - bpp]) & 255
        elif f == 2:   # byte-wise add of whole rows at once, as big ints
            a, b = int.from_bytes(row, 'little'), int.from_bytes(prev, 'little')
            row = bytearray((((a & m7) + (b & m7)) ^ ((a ^ b) & m8))
                            .to_bytes(stride, 'little'))
        elif f == 3:
            for i in range(stride):
                left = row[i - bpp] if i >= bpp else 0
                row[i] = (row[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                a = row[i - bpp] if i >= bpp else 0
                b, c = prev[i], (prev[i - bpp] if i >= bpp else 0)
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                row[i] = (row[i] + pr) & 255
        elif f != 0:
            raise ValueError('bad PNG filter %d' % f)
        out += row
        prev = row
    return w, h, bpp, bytes(out)


def blank_fraction(path):
    """Fraction of pixels differing from the most common colour (the mode is
    estimated from a sample, which is exact whenever the page is near-blank)."""
    w, h, bpp, px = png_pixels(pathlib.Path(path).read_bytes())
    if bpp == 3:
        px4 = bytearray(w * h * 4)
        for c in range(3):
            px4[c::4] = px[c::3]
        px = px4
    pix = array.array('I')
    pix.frombytes(px)
    mode = collections.Counter(pix[::97]).most_common(1)[0][0]
    return 1 - pix.count(mode) / (w * h), w, h


def main(chromium, profile, index, shot):
    log = open(os.path.join(profile, 'chromium.log'), 'wb')
    cdp = Cdp(chromium, profile, log)
    try:
        pages = [t['targetId'] for t in
                 cdp.send('Target.getTargets')['targetInfos']
                 if t['type'] == 'page']
        tid = pages[0] if pages else cdp.send('Target.createTarget',
                                              url='about:blank')['targetId']
        sid = cdp.send('Target.attachToTarget', targetId=tid,
                       flatten=True)['sessionId']
        cdp.send('Page.enable', sid)
        nav = cdp.send('Page.navigate', sid,
                       url=pathlib.Path(index).resolve().as_uri())
        if nav.get('errorText'):
            raise BrowserError('cannot load %s: %s' % (index, nav['errorText']))
        cdp.wait_event('Page.loadEventFired', sid)
        res = cdp.send('Runtime.evaluate', sid, expression=PROBE_JS,
                       awaitPromise=True, returnByValue=True)
        if 'exceptionDetails' in res:
            raise BrowserError('probe script failed: %s'
                               % res['exceptionDetails'].get('text'))
        probe = res['result']['value']
        size = cdp.send('Page.getLayoutMetrics', sid)['cssContentSize']
        clip = {'x': 0, 'y': 0, 'scale': 1, 'width': WIDTH,
                'height': max(1, min(MAX_HEIGHT, int(size['height'])))}
        img = cdp.send('Page.captureScreenshot', sid, format='png', clip=clip,
                       captureBeyondViewport=True, optimizeForSpeed=True)
        pathlib.Path(shot).write_bytes(base64.b64decode(img['data']))
    finally:
        cdp.close()

    bad = [i['src'] for i in probe['images'] if not i['ok']]
    for src in bad:
        print('image did not load: %s' % src)
    frac, w, h = blank_fraction(shot)
    n, why = len(probe['images']), []
    if bad:
        why.append('%d of %d images did not load: %s'
                   % (len(bad), n, ' '.join(bad)))
    if frac < 0.01:
        why.append('screenshot %s (%dx%d) is blank: %.2f%% of pixels differ'
                   % (shot, w, h, 100 * frac))
    if n == 0:
        why.append('page has no <img> elements')
    if probe['text'] <= 100:
        why.append('page body text too short (%d characters)' % probe['text'])
    if why:
        print('browser check: ' + '; '.join(why))
        return 1
    print('browser check: %d images loaded, page not blank (screenshot: %s)'
          % (n, shot))
    return 0


if __name__ == '__main__':
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    try:
        sys.exit(main(*sys.argv[1:]))
    except Exception as e:   # crash, timeout, undecodable PNG: all failures
        if not isinstance(e, BrowserError):
            e = '%s: %s' % (type(e).__name__, e)
        print('browser check: error: %s' % e)
        log = os.path.join(sys.argv[2], 'chromium.log')
        if os.path.exists(log):
            lines = [l for l in open(log, errors='replace') if 'dbus' not in l]
            sys.stdout.write(''.join(lines[-15:]))
        sys.exit(1)
