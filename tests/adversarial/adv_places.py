"""The hostile places run.py's writers write to: a full disk, a read-only
folder and a missing parent folder.

With the right to mount (root in a private mount namespace: run.py re-runs
itself under 'unshare -m') the first two are a tmpfs of 64 KiB, filled up
after the sentinel is written or remounted read-only.  Without it the full
disk is RLIMIT_FSIZE = 0 (SIGXFSZ ignored: every write that grows a file
fails with EFBIG) and the read-only folder a chmod 555 folder, which only
stops a user who is not root."""
import errno
import os
import resource
import signal
import subprocess
import tempfile

PLACES = ("full", "half-full", "read-only", "missing")
TMPFS_SIZE = "1m"
PAGE = 4096


class PlaceError(Exception):
    pass


def can_mount():
    """Whether 'unshare -m' may mount a tmpfs here."""
    if os.geteuid() != 0:
        return False
    d = tempfile.mkdtemp(prefix="maskkit-adv-probe.")
    try:
        r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                            'mount -t tmpfs -o size=4k tmpfs "$0"', d],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return r.returncode == 0
    except OSError:
        return False
    finally:
        os.rmdir(d)


def available(place, mode):
    # as root a chmod 555 folder is still writable: no read-only case there
    return not (place == "read-only" and mode != "tmpfs" and os.geteuid() == 0)


def describe(mode):
    if mode == "tmpfs":
        return "full disk: tmpfs; read-only: tmpfs remounted ro"
    ro = "skipped (root without mount)" if os.geteuid() == 0 else "chmod 555"
    return f"full disk: RLIMIT_FSIZE; read-only: {ro}"


def _mount(*args):
    r = subprocess.run(["mount"] + list(args), stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
    if r.returncode != 0:
        raise PlaceError("mount " + " ".join(args) + ": " + r.stderr.decode().strip())


def _no_file_growth(limit):
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


class Place:
    """with Place(place, host, mode, room) as pl: pl.base is the folder the
    output goes in; put() the sentinels, seal() makes the place hostile, run
    the command with preexec_fn=pl.preexec, then listing() and read().
    'half-full' leaves ROOM bytes free (whole pages of the tmpfs; as a
    file-size limit, ROOM bytes per file): a write fails part way."""

    def __init__(self, place, host, mode, room=0):
        self.place, self.host, self.mode, self.room = place, host, mode, room
        self.mounted = False
        self.preexec = None
        self.base = os.path.join(host, "missing", "sub") if place == "missing" else host

    def __enter__(self):
        if self.place != "missing" and self.mode == "tmpfs":
            _mount("-t", "tmpfs", "-o", f"size={TMPFS_SIZE},mode=0755", "tmpfs", self.host)
            self.mounted = True
        return self

    def __exit__(self, *exc):
        if self.mounted:
            subprocess.run(["umount", self.host], stderr=subprocess.DEVNULL)
        elif self.place == "read-only":
            os.chmod(self.host, 0o755)
        return False

    def put(self, rel, data):
        path = os.path.join(self.base, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(data)

    def read(self, rel):
        try:
            with open(os.path.join(self.base, rel), "rb") as fh:
                return fh.read()
        except OSError as e:
            return f"unreadable: {e.strerror}".encode()

    def seal(self):
        if self.place in ("full", "half-full"):
            room = self.room if self.place == "half-full" else 0
            if self.mode == "tmpfs":
                self._fill(room // PAGE * PAGE)
            else:
                self.preexec = lambda: _no_file_growth(room)
        elif self.place == "read-only":
            if self.mode == "tmpfs":
                _mount("-o", "remount,ro", self.host)
            else:
                os.chmod(self.host, 0o555)

    def _fill(self, room):
        """Every block of the tmpfs taken, then ROOM bytes given back."""
        chunk = bytes(64 * PAGE)
        with open(os.path.join(self.host, "fill"), "wb", buffering=0) as fh:
            for size in (len(chunk), PAGE, 1):
                try:
                    while True:
                        fh.write(chunk[:size])
                except OSError as e:
                    if e.errno != errno.ENOSPC:
                        raise
            if room:
                fh.truncate(max(0, fh.tell() - room))

    def listing(self):
        found = set()
        for root, dirs, files in os.walk(self.host):
            rel = os.path.relpath(root, self.host)
            for d in dirs:
                found.add(os.path.normpath(os.path.join(rel, d)) + "/")
            for f in files:
                found.add(os.path.normpath(os.path.join(rel, f)))
        return found
