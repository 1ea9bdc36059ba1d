#!/usr/bin/env python3
"""The flag table of docs/flags.md against every command's --help.

Each row of the table names a flag, its value's name and the commands that
take it.  A flag that two or more commands take must have a row; a row's
commands must be exactly the commands whose --help lists the flag; and the
commands must name its value alike (a list, "NORM,...", counts as its
item's name) and as the row does.  So the table cannot drift from the
program, in either direction.
"""
import os
import re
import subprocess
import sys

MASKKIT = os.environ["MASKKIT"]
SRCDIR = os.environ.get("SRCDIR", os.path.join(os.path.dirname(__file__), "..", ".."))
OPT = re.compile(r"^  (?:-(\w), |    )--([a-z0-9][a-z0-9-]*)(?: (\S+))?")


def commands():
    out = subprocess.run([MASKKIT, "--help"], capture_output=True, text=True, check=True).stdout
    names, on = [], False
    for line in out.splitlines():
        if line.startswith("commands:"):
            on = True
        elif on and line.startswith("  ") and line.strip():
            names.append(line.split()[0])
        elif on and not line.strip():
            on = False
    return names


def options(cmd):
    """{flag: value name or None} from the options section of `maskkit CMD --help`."""
    out = subprocess.run([MASKKIT, cmd, "--help"], capture_output=True, text=True).stdout
    opts, on = {}, False
    for line in out.splitlines():
        if line == "options:":
            on = True
            continue
        if on and not line.strip():
            break
        m = OPT.match(line) if on else None
        if m:
            opts["--" + m.group(2)] = m.group(3)
    return opts


def table():
    """{flag: (value name or None, set of commands)} from docs/flags.md's rows:
    | `--flag VALUE` | ... | cmd, cmd |"""
    rows = {}
    with open(os.path.join(SRCDIR, "docs", "flags.md"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^\|\s*`(?:-\w, )?(--[a-z0-9-]+)(?: (\S+))?`\s*\|.*\|\s*([^|]*?)\s*\|\s*$",
                         line)
            if m:
                rows[m.group(1)] = (m.group(2), {c.strip() for c in m.group(3).split(",") if c.strip()})
    return rows


def item(meta):
    """A list's value name is its item's: NORM,... is NORM."""
    return meta[:-4] if meta and meta.endswith(",...") else meta


def main():
    cmds = commands()
    if len(cmds) < 10:
        print(f"FAIL: maskkit --help lists only {cmds}")
        return 1
    by_cmd = {c: options(c) for c in cmds}
    takers = {}
    for c, opts in by_cmd.items():
        if not opts:
            print(f"FAIL: maskkit {c} --help lists no options")
            return 1
        for flag in opts:
            takers.setdefault(flag, set()).add(c)
    rows, bad = table(), []
    if not rows:
        print("FAIL: docs/flags.md holds no table rows")
        return 1
    for flag, cs in sorted(takers.items()):
        if len(cs) >= 2 and flag not in rows:
            bad.append(f"{flag}: taken by {', '.join(sorted(cs))} but not in docs/flags.md")
        metas = {item(by_cmd[c][flag]) for c in cs}
        if len(metas) > 1:
            names = ", ".join(f"{c}: {by_cmd[c][flag]}" for c in sorted(cs))
            bad.append(f"{flag}: the commands name its value differently ({names})")
        elif flag in rows and item(rows[flag][0]) not in metas:
            bad.append(f"{flag}: docs/flags.md names its value {rows[flag][0]}, --help {metas.pop()}")
    for flag, (_, cs) in sorted(rows.items()):
        have = takers.get(flag, set())
        if cs != have:
            extra, missing = cs - have, have - cs
            bad.append(f"{flag}: docs/flags.md says {', '.join(sorted(cs))}; --help differs "
                       f"(listed but not taking it: {sorted(extra)}, taking it but not listed: "
                       f"{sorted(missing)})")
    for b in bad:
        print("FAIL:", b)
    print(f"flags: {len(rows)} rows checked against {len(cmds)} commands, {len(bad)} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
