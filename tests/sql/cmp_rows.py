#!/usr/bin/env python3
"""Compare rows of `spulse report --json` (or any JSON array of objects)
with rows of `sqlite3 -json` output, on the given keys.

usage: cmp_rows.py [--ordered] [--rename A=B,...] KEYS WANT.json GOT.json

KEYS is a comma list of the fields compared. WANT may be a report object
(its "rows") or an array; GOT is sqlite3 -json output (empty = no rows).
--rename maps WANT field names to GOT's (e.g. self=self_ns). Exit 0 when
the rows are equal (as sequences with --ordered, else as multisets),
else 1 with the first differences."""
import json
import sys


def load(path):
    text = open(path, encoding="utf-8", errors="surrogateescape").read()
    if not text.strip():
        return []
    obj = json.loads(text)
    return obj["rows"] if isinstance(obj, dict) else obj


def main():
    args = sys.argv[1:]
    ordered = False
    rename = {}
    while args and args[0].startswith("--"):
        if args[0] == "--ordered":
            ordered = True
            args = args[1:]
        elif args[0] == "--rename":
            rename = dict(p.split("=") for p in args[1].split(","))
            args = args[2:]
        else:
            sys.exit("unknown option " + args[0])
    keys, want_p, got_p = args[0].split(","), args[1], args[2]
    want = [tuple(r[k] for k in keys) for r in load(want_p)]
    got = [tuple(r[rename.get(k, k)] for k in keys) for r in load(got_p)]
    if not ordered:
        want.sort(key=repr)
        got.sort(key=repr)
    if want == got:
        print("equal: %d rows" % len(want))
        return 0
    print("rows differ: want %d, got %d" % (len(want), len(got)))
    shown = 0
    for i in range(max(len(want), len(got))):
        w = want[i] if i < len(want) else None
        g = got[i] if i < len(got) else None
        if w != g:
            print("  row %d: want %r" % (i, w))
            print("  row %d: got  %r" % (i, g))
            shown += 1
            if shown == 8:
                break
    return 1


sys.exit(main())
