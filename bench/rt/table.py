#!/usr/bin/env python3
"""make bench-rt's table (bench/rt/run.sh): cyclictest latency per mode.

usage: table.py OUTDIR

Reads OUTDIR/rt.txt (one "run rep=I mode=M json=FILE ..." line per run,
bench/rt/guest.sh) and each run's cyclictest JSON (per-thread histogram in
microseconds, 'cycles', 'max'). Per mode: the wakeups measured, p99 over
all of the mode's runs merged (and each run's own p99), the worst latency
(and each run's). Samples past the histogram's end (100 ms) count as
above it: a p99 among them prints as ">100000". Exit status 1 when a run's
JSON is missing or unreadable (the table is still printed).
"""
import json
import os
import sys

MODES = [('base', 'no profiler'),
         ('spulse', 'spulse record'),
         ('offcpu', 'spulse record --off-cpu'),
         ('perfsw', 'perf record -e sched:sched_switch -g'),
         ('perfboth', 'perf record cpu-clock+sched_switch -g'),
         ('perfwake', 'perf record cpu-clock+sched_switch+sched_waking -g')]


def pct(hist, over, total, q):
    """Smallest latency L with at least q of the samples <= L."""
    need = q * total
    acc = 0
    for lat in sorted(hist):
        acc += hist[lat]
        if acc >= need:
            return str(lat)
    return '>%d' % (max(hist) if hist else 0) if over else '?'


def load(path):
    with open(path) as f:
        j = json.load(f)
    hist, cycles, mx = {}, 0, 0
    for t in j['thread'].values():
        for k, v in t['histogram'].items():
            hist[int(k)] = hist.get(int(k), 0) + v
        cycles += t['cycles']
        mx = max(mx, t['max'])
    return hist, cycles, mx


def main():
    out = sys.argv[1]
    head, runs, errs = [], {}, []
    with open(os.path.join(out, 'rt.txt')) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] != 'run':
                if w[0] != 'done':
                    head.append(line.rstrip())
                continue
            kv = dict(x.split('=', 1) for x in w[1:] if '=' in x)
            runs.setdefault(kv['mode'], []).append(kv)
    host = os.path.join(out, 'host.txt')
    if os.path.exists(host):
        with open(host) as f:
            head += [x.rstrip() for x in f]
    for h in head:
        print('# ' + h)
    rows = []
    base_p99 = base_max = None
    for mode, label in MODES:
        if mode not in runs:
            continue
        hist, cycles, over, mx = {}, 0, 0, 0
        p99s, maxes, notes, cost = [], [], [], {}
        for r in runs[mode]:
            try:
                h, c, m = load(os.path.join(out, r['json']))
            except (OSError, ValueError, KeyError) as e:
                errs.append('%s rep %s: %s' % (mode, r['rep'], e))
                continue
            inh = sum(h.values())
            p99s.append(pct(h, c - inh, c, 0.99))
            maxes.append(m)
            for k, v in h.items():
                hist[k] = hist.get(k, 0) + v
            cycles += c
            over += c - inh
            mx = max(mx, m)
            if r.get('prof_rc', '0') != '0':
                notes.append('rep %s profiler exit %s' % (r['rep'], r['prof_rc']))
            for k in ('not_running', 'cyc_rc', 'left_loaded'):
                if k in r:
                    notes.append('rep %s %s=%s' % (r['rep'], k, r[k]))
            for k in r:
                if k.startswith('spulse_') and r[k].isdigit():
                    cost[k[7:]] = cost.get(k[7:], 0) + int(r[k])
            if 'perf_samples' in r:
                cost['perf_samples'] = cost.get('perf_samples', 0) + int(r['perf_samples'])
        if not maxes:
            continue
        if cost.get('seen'):
            notes.append('spulse.ko: %d sample interrupts, mean handler %.1f us'
                         % (cost['seen'], cost['handler_ns'] / cost['seen'] / 1e3))
        if cost.get('offcpu_taken'):
            notes.append('spulse.ko: %d off-CPU intervals, mean probe time %.1f us'
                         ' (switch-out, wakeup and switch-in probes; IRQs off)'
                         % (cost['offcpu_taken'],
                            cost['offcpu_handler_ns'] / cost['offcpu_taken'] / 1e3))
        if cost.get('offcpu_written') and 'offcpu_write_ns' in cost:
            notes.append('spulse.ko: %d off-CPU intervals written, mean write %.1f us'
                         ' (irq_work in hard IRQ after the switch, rq lock dropped;'
                         ' queue full %d)'
                         % (cost['offcpu_written'],
                            cost['offcpu_write_ns'] / cost['offcpu_written'] / 1e3,
                            cost.get('offcpu_dropped_queue_full', 0)))
        if cost.get('offcpu_taken') and 'offcpu_filtered' in cost:
            # where the switch-outs went (the identity of docs/KERNEL.md,
            # read while recording: the rest is still open or queued)
            lost = sorted((k, v) for k, v in cost.items()
                          if v and (k.startswith('offcpu_dropped_')
                                    or k in ('offcpu_filtered', 'offcpu_lost')))
            rest = cost['offcpu_taken'] - cost['offcpu_written'] - sum(v for _, v in lost)
            notes.append('spulse.ko: off-CPU intervals taken %d = written %d + %s'
                         ' + open or queued at the stats read %d'
                         % (cost['offcpu_taken'], cost['offcpu_written'],
                            ' + '.join('%s %d' % kv for kv in lost) or 'no drops', rest))
        if cost.get('wakeups_taken') and 'offcpu_wakers_in_irq' in cost:
            notes.append('spulse.ko: %d wakeups of targets, %d in interrupt context'
                         ' (kernel stack to the interrupt entry, no user stack);'
                         ' %d intervals written later (switched in a user RT task)'
                         % (cost['wakeups_taken'], cost['offcpu_wakers_in_irq'],
                            cost.get('offcpu_write_deferred', 0)))
        for ph, what in (('out', 'switch-out'), ('wake', 'wakeup'), ('in', 'switch-in'),
                         ('write', 'irq_work write')):
            n = cost.get('phase_%s_n' % ph)
            if not n:
                continue
            parts = sorted((k[len('phase_%s_' % ph):-3], v) for k, v in cost.items()
                           if k.startswith('phase_%s_' % ph) and k.endswith('_ns'))
            notes.append('spulse.ko %s probe (offcpu_phase_stats): %d, mean us %s' %
                         (what, n, ' '.join('%s %.1f' % (k, v / n / 1e3) for k, v in parts)))
        if cost.get('perf_samples'):
            notes.append('perf: %d %ssamples' % (cost['perf_samples'],
                         'sched_switch ' if mode == 'perfsw' else ''))
        p99 = pct(hist, over, cycles, 0.99)
        p50 = pct(hist, over, cycles, 0.50)
        if mode == 'base':
            base_p99, base_max = p99, mx
        rows.append((label, len(maxes), cycles, p50, p99, ','.join(p99s),
                     mx, ','.join(str(x) for x in maxes), notes))
    print('%-38s %4s %8s %6s %7s %-20s %7s %-24s' %
          ('mode', 'runs', 'wakeups', 'p50us', 'p99us', 'p99 per run',
           'max us', 'max per run'))
    for (label, n, cycles, p50, p99, p99s, mx, maxes, notes) in rows:
        print('%-38s %4d %8d %6s %7s %-20s %7d %-24s' %
              (label, n, cycles, p50, p99, p99s, mx, maxes))
        for x in notes:
            print('    note: ' + x)
    if base_p99 is not None and base_p99.isdigit():
        for (label, n, cycles, p50, p99, p99s, mx, maxes, notes) in rows:
            if label == MODES[0][1] or not p99.isdigit():
                continue
            print('%-38s p99 %+6d us vs no profiler, max %+7d us' %
                  (label, int(p99) - int(base_p99), mx - base_max))
    for e in errs:
        print('error: ' + e)
    return 1 if errs else 0


if __name__ == '__main__':
    sys.exit(main())
