#!/usr/bin/env python3
"""Per-sample window instructions of spulse.ko's functions, two bench runs.

usage: compare.py BEFORE_DIR AFTER_DIR [MIN]

BEFORE_DIR and AFTER_DIR are make bench-insns output directories
(build/bench-insns of two trees). For each workload length both ran with
spulse record (mode sp): every spulse.ko function's window instructions
(the snapshot at the done marker) summed over all reps, divided by all
those runs' samples, side by side; the functions at or above MIN (20)
per sample in either run, then copy_user_enhanced_fast_string and
copy_from_user_nmi (the kernel's user copies) and the sum over
spulse.ko. Unlike table.py's slopes these are plain means at one length:
what one sample costs there, without the scatter of time-driven work.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import table  # noqa: E402


def load(d):
    snaps = table.read_snapshots(os.path.join(d, 'insns.txt'))
    with open(os.path.join(d, 'marks.txt')) as f:
        marks = [l.split() for l in f]
    samples = {}
    with open(os.path.join(d, 'runs.txt')) as f:
        for l in f:
            if l.startswith('run '):
                kv = table.kv(l)
                samples[(kv['rep'], kv['wl'], kv['mode'], kv['len'])] = int(kv['samples'])
    if len(marks) != len(snaps):
        sys.exit('%s: %d markers, %d snapshots' % (d, len(marks), len(snaps)))
    res = {}
    for i, m in enumerate(marks):
        if not m or m[0] != 'done':
            continue
        kv = table.kv(' '.join(m))
        if kv['mode'] != 'sp':
            continue
        n = samples[(kv['rep'], kv['wl'], kv['mode'], kv['len'])]
        res.setdefault((kv['wl'], int(kv['len'])), []).append((n, snaps[i][3]))
    return res


def per_sample(runs):
    tot, n = {}, sum(r[0] for r in runs)
    for _, fs in runs:
        for k, v in fs.items():
            tot[k] = tot.get(k, 0) + v
    return {k: v / n for k, v in tot.items()} if n else {}


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    lo = float(sys.argv[3]) if len(sys.argv) == 4 else 20
    b, a = load(sys.argv[1]), load(sys.argv[2])
    for key in sorted(set(b) & set(a)):
        pb, pa = per_sample(b[key]), per_sample(a[key])
        mine = lambda p: {k: v for k, v in p.items() if k.endswith(' [spulse]')}
        mb, ma = mine(pb), mine(pa)
        print('== %s len %d: spulse record, window instructions per sample '
              '(all reps: function total / samples)' % key)
        print('   %-40s %8s %8s' % ('function', 'before', 'after'))
        names = {k for k, v in mb.items() if v >= lo} | {k for k, v in ma.items() if v >= lo}
        for k in sorted(names, key=lambda k: (-mb.get(k, 0), -ma.get(k, 0))):
            print('   %-40s %8.0f %8.0f' % (k[:-len(' [spulse]')], mb.get(k, 0), ma.get(k, 0)))
        for k in ('copy_user_enhanced_fast_string', 'copy_from_user_nmi'):
            print('   %-40s %8.0f %8.0f' % (k, pb.get(k, 0), pa.get(k, 0)))
        print('   %-40s %8.0f %8.0f' % ('all of spulse.ko', sum(mb.values()), sum(ma.values())))


if __name__ == '__main__':
    main()
