#!/usr/bin/env python3
"""Table of make bench-unwind (bench/vm/unwind_run.sh): reads OUT/runs/.

    unwind_table.py OUT

Per mode: median and a bootstrap 95% interval of the median (2000
resamples, fixed seed) over the repetitions, and the ratio of medians with
its bootstrap interval. Verdicts: MET / NOT MET against the issue's
targets when the interval is on one side of the target, INCONCLUSIVE when
it straddles it.
"""
import glob
import os
import random
import re
import statistics
import sys


def stats(path):
    st = {}
    try:
        for line in open(path):
            p = line.split()
            if len(p) == 2 and re.fullmatch(r'-?\d+', p[1]):
                st[p[0]] = int(p[1])
    except OSError:
        pass
    return st


def boot(xs, f=statistics.median, n=2000, seed=1):
    if not xs:
        return (float('nan'),) * 3
    r = random.Random(seed)
    v = sorted(f([r.choice(xs) for _ in xs]) for _ in range(n))
    return f(xs), v[int(0.025 * n)], v[int(0.975 * n) - 1]


def boot_ratio(a, b, n=2000, seed=2):
    if not a or not b:
        return (float('nan'),) * 3
    r = random.Random(seed)
    v = sorted(statistics.median([r.choice(a) for _ in a]) /
               statistics.median([r.choice(b) for _ in b]) for _ in range(n))
    return statistics.median(a) / statistics.median(b), v[int(0.025 * n)], v[int(0.975 * n) - 1]


def verdict(lo, hi, target):
    if hi <= target:
        return 'MET'
    if lo > target:
        return 'NOT MET'
    return 'INCONCLUSIVE'


def main():
    out = sys.argv[1]
    runs = os.path.join(out, 'runs')
    h = {'fp': [], 'tables': []}
    steps = {'fp': [], 'tables': []}
    for mode in h:
        for a in sorted(glob.glob(os.path.join(runs, 'h.%s.*.a' % mode))):
            b = a[:-1] + 'b'
            sa, sb = stats(a), stats(b)
            dn = sb.get('samples_taken', 0) - sa.get('samples_taken', 0)
            if dn <= 0:
                continue
            h[mode].append((sb['handler_ns'] - sa['handler_ns']) / dn)
            steps[mode].append(((sb.get('ustack_table_steps', 0) - sa.get('ustack_table_steps', 0)) / dn,
                                (sb.get('ustack_fp_steps', 0) - sa.get('ustack_fp_steps', 0)) / dn,
                                (sb.get('ustack_complete', 0) - sa.get('ustack_complete', 0)) / dn,
                                dn))
    print('make bench-unwind: stock kernel in the TCG VM, %d repetitions per mode, interleaved'
          % max(len(h['fp']), len(h['tables'])))
    print()
    print('1. handler_ns per sample, FP-built workload (build/workload/gt), a 2.5 s window '
          'from 0.3 s after sampling (fp) / the table mapping (tables) started')
    print('%-8s %5s %12s %24s %14s %14s %12s' % ('unwind', 'runs', 'median ns', '95% interval',
                                              'table steps/s.', 'fp steps/s.', 'complete'))
    for mode in ('fp', 'tables'):
        m, lo, hi = boot(h[mode])
        st = steps[mode]
        print('%-8s %5d %12.0f %24s %14.2f %14.2f %11.0f%%' % (
            mode, len(h[mode]), m, '[%.0f .. %.0f]' % (lo, hi),
            statistics.mean(s[0] for s in st) if st else float('nan'),
            statistics.mean(s[1] for s in st) if st else float('nan'),
            100 * statistics.mean(s[2] for s in st) if st else float('nan')))
    r, lo, hi = boot_ratio(h['tables'], h['fp'])
    print('tables / fp: %.2fx [%.2f .. %.2f]   target <= 2x: %s' % (r, lo, hi, verdict(lo, hi, 2.0)))
    print('per run (fp / tables ns): %s / %s' % (
        ' '.join('%.0f' % x for x in h['fp']), ' '.join('%.0f' % x for x in h['tables'])))
    print()

    bs = {'spulse': [], 'perf': []}
    for tool in bs:
        for f in sorted(glob.glob(os.path.join(runs, 'b.%s.*.log' % tool))):
            t = open(f, errors='replace').read()
            mb = re.search(r'^bytes (\d+)', t, re.M)
            if tool == 'spulse':
                ms = re.search(r'samples (\d+),', t)
            else:
                ms = re.search(r'\((\d+) samples\)', t)
            if mb and ms and int(ms.group(1)):
                bs[tool].append((int(mb.group(1)) / int(ms.group(1)), int(ms.group(1))))
    print('2. output bytes per sample, FP-less workload (nofp 3 s, -F 999)')
    print('%-22s %5s %14s %24s %10s' % ('recorder', 'runs', 'median B/smp', '95% interval', 'samples'))
    for tool, name in (('spulse', 'spulse record'), ('perf', 'perf --call-graph dwarf')):
        xs = [x[0] for x in bs[tool]]
        m, lo, hi = boot(xs)
        print('%-22s %5d %14.1f %24s %10s' % (name, len(xs), m, '[%.1f .. %.1f]' % (lo, hi),
                                             ','.join(str(x[1]) for x in bs[tool])))
    r, lo, hi = boot_ratio([x[0] for x in bs['spulse']], [x[0] for x in bs['perf']])
    print('spulse / perf dwarf: 1/%.0f [1/%.0f .. 1/%.0f]   target <= 1/500: %s' % (
        1 / r if r else float('inf'), 1 / lo if lo else float('inf'),
        1 / hi if hi else float('inf'), verdict(lo, hi, 1 / 500)))
    print()

    st = stats(os.path.join(runs, 'py.stats'))
    print('3. table memory, one process (Debian python3 running unwind_work.py)')
    if st:
        procs = max(1, st.get('unwind_processes', 1))
        print('unwind_tables %d, unwind_rows %d, unwind_bytes %d (%.1f KiB), processes %d: '
              '%.1f KiB per process' % (st.get('unwind_tables', 0), st.get('unwind_rows', 0),
                                        st.get('unwind_bytes', 0), st.get('unwind_bytes', 0) / 1024,
                                        procs, st.get('unwind_bytes', 0) / 1024 / procs))
    else:
        print('(no stats)')
    rows = os.path.join(out, 'rows.txt')
    if os.path.exists(rows):
        print('tables as built (rows, ADD message bytes):')
        for line in open(rows):
            p = line.split()
            if len(p) == 5:
                print('  %-60s %8s rows %9s bytes' % (p[0], p[2], p[4]))


if __name__ == '__main__':
    main()
