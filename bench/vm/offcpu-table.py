#!/usr/bin/env python3
"""Print the bench-offcpu table (bench/vm/offcpu-run.sh).

usage: offcpu-table.py OFFCPU_TXT HOST_TXT ROUNDS FREQ CPU

OFFCPU_TXT: the guest's lines, one per run:
    run rep=I mode=M s=WALL nvcsw=V nivcsw=I bytes=B [seen=N] [key=value...]
HOST_TXT: host-side notes (spulse_skipped WHY, events FILE EVENT COUNT,
    spool_check ok|FAILED ...).

Per mode: median wall time (pingpong's own clock) with a bootstrap 95%
interval, slowdown and added time vs unprofiled (bootstrap intervals too),
output bytes, switches seen by the tool (spulse record: the intervals of its
summary; spulse.ko + spulse-drain: off-CPU intervals written + filtered from
the module's stats; perf: sched:sched_switch samples), bytes per switch seen and
per switch of the workload (getrusage nvcsw + nivcsw, the same definition
for every mode). Verdicts: spulse's added time <= 1/2 of perf's (MET / NOT
MET only when the bootstrap intervals separate, INCONCLUSIVE otherwise);
bytes per switch <= 1/10 of perf.data's.
"""
import collections
import random
import re
import sys

BOOT = 4000
MODES = [('base', 'unprofiled'),
         ('spulserec', 'spulse record --off-cpu'),
         ('spulse', 'spulse.ko offcpu=1 + spulse-drain'),
         ('perfsw', 'perf record -e sched:sched_switch -g'),
         ('perfsched', 'perf sched record')]
NAME = dict(MODES)
SPULSE_MODES = ('spulserec', 'spulse')
PERF_MODES = ('perfsw', 'perfsched')


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def boot_medians(xs, rng):
    """BOOT bootstrap replicates of the median of xs."""
    n = len(xs)
    return [median([xs[rng.randrange(n)] for _ in range(n)]) for _ in range(BOOT)]


def ci(reps):
    s = sorted(reps)
    return s[int(0.025 * (len(s) - 1))], s[int(0.975 * (len(s) - 1))]


def separate(a, b):
    """a, b: (lo, hi). -1 if a is entirely below b, 1 if above, 0 if they
    overlap."""
    if a[1] < b[0]:
        return -1
    if a[0] > b[1]:
        return 1
    return 0


def parse(path):
    runs = collections.defaultdict(list)
    info, errors = {}, []
    with open(path) as f:
        for line in f:
            line = line.rstrip('\n')
            if line.startswith('run '):
                kv = dict(x.split('=', 1) for x in line.split()[1:] if '=' in x)
                runs[kv['mode']].append(kv)
            elif line.startswith('error '):
                errors.append(line[6:])
            elif ' ' in line:
                k, v = line.split(' ', 1)
                info[k] = v
    return runs, info, errors


def spulse_seen(run):
    """Off-CPU intervals the module saw: written + filtered, from its stats
    (keys spulse_*offcpu*written* / *filtered*). None if the stats have no
    such keys."""
    w = [int(v) for k, v in run.items()
         if k.startswith('spulse_') and 'offcpu' in k and 'written' in k]
    fl = [int(v) for k, v in run.items()
          if k.startswith('spulse_') and 'offcpu' in k and 'filtered' in k]
    if not w:
        return None
    return sum(w) + sum(fl)


def main():
    runs, info, errors = parse(sys.argv[1])
    host = collections.defaultdict(list)
    with open(sys.argv[2]) as f:
        for line in f:
            k, _, v = line.rstrip('\n').partition(' ')
            host[k].append(v)
    rounds, freq, cpu = sys.argv[3], sys.argv[4], sys.argv[5]
    rng = random.Random(7)

    for e in errors:
        print('bench-offcpu: guest error: %s' % e)
    if not runs.get('base'):
        print('bench-offcpu: no unprofiled runs')
        return 1
    nreps = min(len(v) for v in runs.values())
    sw_s = [(int(r['nvcsw']) + int(r['nivcsw'])) / float(r['s'])
            for r in runs['base']]
    print('bench-offcpu: pingpong -n %s round trips%s, %s; TCG %s vCPUs, kernel %s'
          % (rounds, ' pinned to vCPU %s' % cpu if cpu else ' (not pinned)',
             info.get('perf', 'perf ?'), info.get('cpus', '?'), info.get('kernel', '?')))
    print('%d reps per mode, interleaved in rotating order; median with bootstrap 95%% '
          'interval (%d resamples)' % (nreps, BOOT))
    print('unprofiled: %.0f switches/s measured (getrusage nvcsw+nivcsw / wall; median, '
          'runs %.0f..%.0f)' % (median(sw_s), min(sw_s), max(sw_s)))
    print('spulse: offcpu_min_us=0 (every switch recorded), on-CPU sampling at freq=%s Hz; '
          'spools on the guest tmpfs like perf.data' % freq)
    if host.get('tree'):
        print('tree %s' % host['tree'][0])
    if host.get('kparams') and host['kparams'][0]:
        print('spulse.ko offcpu=1 + spulse-drain: extra module parameters: %s'
              % host['kparams'][0])
    if host.get('spulse_skipped') and host['spulse_skipped'][0]:
        print('spulse: NOT RUN: %s' % host['spulse_skipped'][0])
    print()
    hdr = ('%-38s %8s %17s %8s %17s %9s %8s %9s %8s %8s'
           % ('mode', 'wall_s', '95% interval', 'slowdn', 'added_s 95%', 'bytes',
              'seen', 'B/seen', 'wl_sw', 'B/wl_sw'))
    print(hdr)
    base = [float(r['s']) for r in runs['base']]
    bb = boot_medians(base, rng)
    mb = median(base)
    boot = {'base': bb}
    row = {}
    for mode, name in MODES:
        rs = runs.get(mode)
        if not rs:
            continue
        t = [float(r['s']) for r in rs]
        bm = bb if mode == 'base' else boot_medians(t, rng)
        boot[mode] = bm
        mt = median(t)
        lo, hi = ci(bm)
        added = [m - b for m, b in zip(bm, bb)]
        alo, ahi = ci(added)
        byts = [int(r['bytes']) for r in rs]
        wl = [int(r['nvcsw']) + int(r['nivcsw']) for r in rs]
        if mode == 'spulse':
            seen = [spulse_seen(r) for r in rs]
            seen = None if None in seen else seen
        elif mode == 'spulserec':
            seen = [int(r.get('seen', 0)) for r in rs]
        elif mode == 'base':
            seen = None
        else:
            seen = [int(r.get('seen', 0)) for r in rs]
        bps = [b / s for b, s in zip(byts, seen) if s] if seen else []
        bpw = [b / w for b, w in zip(byts, wl) if w]
        row[mode] = dict(t=mt, added=(mt - mb, alo, ahi), added_boot=added,
                         bps=median(bps) if bps else None, bpw=median(bpw))
        if mode == 'base':
            print('%-38s %8.3f %8.3f..%-8.3f %7.3f %19s %9s %8s %7s %8d %8s'
                  % (name, mt, lo, hi, 1.0, '-', '-', '-', '-', median(wl), '-'))
            continue
        print('%-38s %8.3f %8.3f..%-8.3f %7.3f %+9.3f..%-+8.3f %9d %8s %7s %8d %8.1f'
              % (name, mt, lo, hi, mt / mb, alo, ahi, median(byts),
                 '%d' % median(seen) if seen else '?',
                 '%.1f' % median(bps) if bps else '?', median(wl), median(bpw)))
    print()
    print('wall_s: pingpong\'s own clock of its round trips; slowdn: median / unprofiled '
          'median; added_s: bootstrap 95% interval of (median - unprofiled median)')
    print('seen: switches the tool recorded (spulse record: the off-CPU intervals of its '
          'summary; spulse.ko + spulse-drain: offcpu_written + offcpu_filtered of the '
          'module\'s stats; perf: its sched:sched_switch samples, perf report --stats); wl_sw: the workload\'s own '
          'getrusage nvcsw + nivcsw, same definition in every mode')
    # Paired: each rep runs every mode within a minute, so mode/base of the
    # same rep cancels slow drifts of the shared host's load.
    base_by_rep = {r['rep']: float(r['s']) for r in runs['base']}
    for mode, name in MODES[1:]:
        pr = [float(r['s']) / base_by_rep[r['rep']] for r in runs.get(mode, [])
              if r['rep'] in base_by_rep]
        if len(pr) >= 2:
            plo, phi = ci(boot_medians(pr, rng))
            print('  paired slowdown (same-rep %s / unprofiled): median %.3f [%.3f..%.3f]'
                  % (name, median(pr), plo, phi))
    ks = [int(r['kallsyms_bytes']) for r in runs.get('spulserec', []) if 'kallsyms_bytes' in r]
    print('bytes: the spool or perf.data only%s'
          % (' (not counted: spulse record\'s FILE.kallsyms sidecar, %d bytes, written '
             'once per recording)' % median(ks) if ks else ''))
    for mode, _ in MODES[1:]:
        rs = runs.get(mode)
        if not rs:
            continue
        cov = [(spulse_seen(r) if mode == 'spulse' else int(r.get('seen', 0)))
               / max(int(r['nvcsw']) + int(r['nivcsw']), 1) for r in rs
               if mode != 'spulse' or spulse_seen(r) is not None]
        if cov:
            print('  %s: seen / wl_sw per run: median %.3f (min %.3f, max %.3f)'
                  % (NAME[mode], median(cov), min(cov), max(cov)))
    for ev in host.get('events', []):
        f, e, n = ev.split()
        print('  last rep %s: %s %s' % (f, e, n))
    for c in host.get('spool_check', []):
        print('  last rep spool %s: spulse check %s' % tuple(c.split(' ', 1)))
    for c in host.get('spool_raw', []):
        print('  last rep spool %s (tests/e2e/spool.py RawSpool): %s' % tuple(c.split(' ', 1)))
    if 'spulse' in runs:
        params = {'spulse_offcpu', 'spulse_offcpu_min_us', 'spulse_offcpu_threads',
                  'spulse_target_pid', 'spulse_freq'}
        keys = sorted({k for r in runs['spulse'] for k in r
                       if k.startswith('spulse_') and k not in params
                       and ('offcpu' in k or 'wakeup' in k or 'early' in k
                            or 'dropped' in k or 'lost' in k)})
        med = {k: median([int(r[k]) for r in runs['spulse'] if k in r]) for k in keys}
        nz = ['%s=%d' % (k[7:], v) for k, v in med.items() if v and 'handler' not in k]
        z = [k[7:] for k, v in med.items() if not v]
        print('  spulse.ko stats (medians): %s' % ', '.join(nz))
        if z:
            print('  spulse.ko stats that were 0 in the median run: %s' % ', '.join(z))
        # docs/KERNEL.md "Stats and their identities" (exact after stop)
        parts = ['written', 'filtered', 'dropped_buffer_full', 'dropped_busy',
                 'dropped_no_slot', 'dropped_too_deep', 'dropped_error', 'lost',
                 'open_at_stop']
        ok = [r for r in runs['spulse'] if 'spulse_offcpu_taken' in r and
              int(r['spulse_offcpu_taken']) ==
              sum(int(r.get('spulse_offcpu_' + q, 0)) for q in parts)]
        print('  spulse.ko identity offcpu_taken = written + filtered + dropped_* + lost '
              '+ open_at_stop: holds in %d of %d runs' % (len(ok), len(runs['spulse'])))
        for hk, ck in (('spulse_offcpu_handler_ns', 'spulse_offcpu_taken'),
                       ('spulse_handler_ns', 'spulse_samples_taken')):
            per = [int(r[hk]) / 1e3 / int(r[ck]) for r in runs['spulse']
                   if hk in r and int(r.get(ck, 0))]
            if per:
                print('  spulse.ko %s / %s: median %.1f us (min %.1f, max %.1f)'
                      % (hk[7:], ck[7:], median(per), min(per), max(per)))
        # offcpu_phase_stats=1 (docs/KERNEL.md "Phase stats"): per phase, the
        # median over runs of phase ns / its event count, and of phase ns /
        # offcpu_taken (the cost per switch, comparable to the line above)
        ph = sorted({k for r in runs['spulse'] for k in r
                     if k.startswith('spulse_phase_') and k.endswith('_ns')})
        if ph:
            print('  spulse.ko phase split (offcpu_phase_stats=1; medians over runs; '
                  'us per event of the phase / us per offcpu_taken):')
            for k in ph:
                grp = k[len('spulse_phase_'):].split('_')[0]
                nk = 'spulse_phase_%s_n' % grp
                per_ev = [int(r[k]) / 1e3 / int(r[nk]) for r in runs['spulse']
                          if k in r and int(r.get(nk, 0))]
                per_sw = [int(r[k]) / 1e3 / int(r['spulse_offcpu_taken'])
                          for r in runs['spulse']
                          if k in r and int(r.get('spulse_offcpu_taken', 0))]
                evs = [int(r[nk]) for r in runs['spulse'] if nk in r]
                print('    %-22s %7.2f us x %7d events  = %6.2f us/switch'
                      % (k[len('spulse_phase_'):],
                         median(per_ev) if per_ev else 0.0,
                         median(evs) if evs else 0,
                         median(per_sw) if per_sw else 0.0))
            tot = [sum(int(r[k]) for k in ph if k in r) / 1e3 / int(r['spulse_offcpu_taken'])
                   for r in runs['spulse'] if int(r.get('spulse_offcpu_taken', 0))]
            if tot:
                print('    %-22s %38.2f us/switch (offcpu_handler_ns covers these + the '
                      'probe entry/exit)' % ('sum of phases', median(tot)))
        hm = [(int(r['spulse_stack_cache_hits']), int(r['spulse_stack_cache_misses']))
              for r in runs['spulse'] if 'spulse_stack_cache_hits' in r]
        if hm:
            print('  spulse.ko stack cache: hits %d, misses %d (median run)'
                  % (median([h for h, _ in hm]), median([m for _, m in hm])))
        dc = [float(r['drain_cpu_s']) for r in runs['spulse'] if 'drain_cpu_s' in r]
        if dc:
            print('  spulse-drain CPU time per run: median %.2f s (max %.2f)'
                  % (median(dc), max(dc)))
        bad = [r['rep'] for r in runs['spulse'] if r.get('drain_rc', '0') != '0']
        if bad:
            print('  spulse-drain exited non-zero in reps %s' % ','.join(bad))
    print()
    for sm in SPULSE_MODES:
        sp = row.get(sm)
        for pm in PERF_MODES:
            pf = row.get(pm)
            if not pf:
                continue
            if not sp:
                print('added time %s <= 1/2 of %s: NOT MEASURED (no %s runs)'
                      % (NAME[sm], NAME[pm], NAME[sm]))
                continue
            s_ci = sp['added'][1:]
            h_ci = ci([x / 2 for x in pf['added_boot']])
            verdict = {-1: 'MET', 1: 'NOT MET',
                       0: 'INCONCLUSIVE (intervals overlap)'}[separate(s_ci, h_ci)]
            if pf['added'][1] <= 0:
                verdict = ('INCONCLUSIVE (%s\'s added time is not distinguishable from 0)'
                           % NAME[pm])
            print('added time: %s %+.3f s [%+.3f..%+.3f] vs 1/2 of %s %+.3f s '
                  '[%+.3f..%+.3f] (target <= 1/2): %s'
                  % (NAME[sm], sp['added'][0], s_ci[0], s_ci[1], NAME[pm],
                     pf['added'][0] / 2, h_ci[0], h_ci[1], verdict))
    for sm in SPULSE_MODES:
        sp = row.get(sm)
        for pm in PERF_MODES:
            pf = row.get(pm)
            if not pf or not sp:
                continue
            a, b = sp['bps'], pf['bps']
            if a is None or b is None:
                print('bytes per switch seen, %s vs %s: NOT MEASURED (no switch count)'
                      % (NAME[sm], NAME[pm]))
                continue
            print('bytes per switch seen: %s %.1f vs %s %.1f = 1/%.1f (target <= 1/10): %s'
                  '   [per workload switch: %.1f vs %.1f = 1/%.1f]'
                  % (NAME[sm], a, NAME[pm], b, b / a if a else float('inf'),
                     'MET' if a * 10 <= b else 'NOT MET',
                     sp['bpw'], pf['bpw'], pf['bpw'] / sp['bpw'] if sp['bpw'] else float('inf')))
    print('all runs (s): ' + '; '.join(
        '%s %s' % (m, ' '.join(r['s'] for r in runs[m])) for m, _ in MODES if m in runs))
    return 0


if __name__ == '__main__':
    sys.exit(main())
