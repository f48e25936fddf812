#!/usr/bin/env python3
"""Print the bench-vm table (bench/vm/run-bench.sh, issue 11 Deliver 1).

usage: table.py BENCH_TXT HOST_TXT

BENCH_TXT: the guest's lines (bench/vm/guest-bench.sh), one per run:
    run rep=I wl=W mode=M work_s=S wcpu_s=C widle_s=I total_s=T cpu_s=G
        idle_s=J self_cpu_s=P child_cpu_s=X rc=R [bytes=B samples=N ...]
and "key value" notes, "error ..." lines.
HOST_TXT: host-side notes (tree, host load, spool_check).

Statistics: per mode the median of the REPS runs with a bootstrap 95%
interval of the median (BOOT resamples of the runs). "added" is PAIRED: per
rep, the mode's value minus the unprofiled value of the same rep (both ran
within a minute or two, so slow drifts of a shared host's load cancel); the
median of these differences with a bootstrap interval over the reps. A
verdict compares spulse's added interval with the interval of 1/2 of
perf's added (same pairing): MET when spulse's lies wholly below, NOT MET
when wholly above, INCONCLUSIVE when they overlap (or when perf's added
interval reaches 0).

Below each verdict a "paired" line gives the same comparison rep by rep:
per rep, X's added minus 1/2 of perf -g's added (both against that rep's
unprofiled run), its median and bootstrap interval; "> 0" or "< 0" when
the interval excludes 0. Information only: the verdicts keep the rule above.

Two reference modes, compared with 1/2 of perf -g the same way (ABOVE /
BELOW 1/2): the floor, perf record without -g (pnF), and spulse's null
handler, spulse record --module-params sample_null=1 (snF): spulse.ko's
own events firing, the handler counting and returning, the drainer running.
"""
import collections
import random
import sys

BOOT = 2000
WLS = [('gt', 'gt'), ('py', 'python3')]
START = ('true:base', 'true:sp999', 'true:pf999')


def median(xs):
    s = sorted(xs)
    n = len(s)
    if not n:
        return float('nan')
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def boot(xs, rng):
    n = len(xs)
    return [median([xs[rng.randrange(n)] for _ in range(n)]) for _ in range(BOOT)]


def ci(xs, rng):
    """(median, lo, hi) of xs: bootstrap 95% interval of the median."""
    if len(xs) < 2:
        m = median(xs)
        return m, m, m
    b = sorted(boot(xs, rng))
    return median(xs), b[int(0.025 * (BOOT - 1))], b[int(0.975 * (BOOT - 1))]


def parse(path):
    runs = collections.defaultdict(list)
    info, errors = {}, []
    with open(path) as f:
        for line in f:
            line = line.rstrip('\n')
            if line.startswith('run '):
                kv = dict(x.split('=', 1) for x in line.split()[1:] if '=' in x)
                if kv.get('rc', '0') != '0':
                    errors.append('rep %s %s %s exit %s' % (kv['rep'], kv['wl'], kv['mode'],
                                                           kv['rc']))
                    continue
                runs[(kv['wl'], kv['mode'])].append(kv)
            elif line.startswith('error '):
                errors.append(line[6:])
            elif ' ' in line:
                k, v = line.split(' ', 1)
                info[k] = v
    return runs, info, errors


def num(r, k):
    try:
        v = float(r[k])
    except (KeyError, ValueError):
        return None
    return v


def metric(r, name, ncpu):
    """One run's value of a derived metric (None when not available)."""
    if name == 'wcpu2':		# guest busy over the workload window, idle-derived
        w, i = num(r, 'work_s'), num(r, 'widle_s')
        return None if w is None or i is None or i < 0 else w * ncpu - i
    if name == 'cpu2':
        t, i = num(r, 'total_s'), num(r, 'idle_s')
        return None if t is None or i is None or i < 0 else t * ncpu - i
    if name == 'bps':
        b, n = num(r, 'bytes'), num(r, 'samples')
        return b / n if b and n else None
    if name == 'hus':		# handler us per sample taken
        h, n = num(r, 'spulse_handler_ns'), num(r, 'spulse_samples_taken')
        return h / 1e3 / n if h is not None and n else None
    if name == 'hshare':	# handler time / (work_s * CPUs)
        h, w = num(r, 'spulse_handler_ns'), num(r, 'work_s')
        return h / 1e9 / (w * ncpu) if h is not None and w else None
    v = num(r, name)
    return None if v is None or v < 0 else v


def values(rs, name, ncpu):
    return [v for v in (metric(r, name, ncpu) for r in rs) if v is not None]


def paired_by_rep(runs, wl, mode, name, ncpu, base_mode='base'):
    """{rep: mode - base} for metric name, in the order of the mode's runs."""
    base = {r['rep']: metric(r, name, ncpu) for r in runs.get((wl, base_mode), [])}
    out = {}
    for r in runs.get((wl, mode), []):
        v, b = metric(r, name, ncpu), base.get(r['rep'])
        if v is not None and b is not None:
            out[r['rep']] = v - b
    return out


def paired(runs, wl, mode, name, ncpu, base_mode='base', scale=1.0):
    """Per-rep (mode - base) * scale for metric name."""
    return [d * scale for d in paired_by_rep(runs, wl, mode, name, ncpu, base_mode).values()]


def fmt_ci(t, w=6, p=3):
    m, lo, hi = t
    if m != m:
        return '%*s' % (3 * w + 5, '-')
    return '%*.*f [%.*f..%.*f]' % (w, p, m, p, lo, p, hi)


def fmt_dci(t, p=3):
    m, lo, hi = t
    if m != m:
        return '-'
    return '%+.*f [%+.*f..%+.*f]' % (p, m, p, lo, p, hi)


MIN_PAIRS = 5


def verdict(sp, pf_half, pf, n):
    """sp, pf_half, pf: (median, lo, hi) intervals of the added cost; n:
    the fewer of the two modes' paired reps."""
    if sp[0] != sp[0] or pf[0] != pf[0]:
        return 'NOT MEASURED'
    if n < MIN_PAIRS:
        return 'INCONCLUSIVE (%d paired reps < %d)' % (n, MIN_PAIRS)
    if pf[1] <= 0:
        return 'INCONCLUSIVE (perf -g\'s added interval reaches 0)'
    if sp[2] < pf_half[1]:
        return 'MET'
    if sp[1] > pf_half[2]:
        return 'NOT MET'
    return 'INCONCLUSIVE (intervals overlap)'


# (result key, metric, label) of the verdict lines; the first two are the
# steady-state targets (and the floor's lines)
VERDICT_METRICS = (
    ('aw', 'work_s', 'steady-state added wall time'),
    ('ac', 'wcpu_s', 'steady-state added guest CPU time'),
    ('ai', 'wcpu2', 'steady-state added guest CPU time (window x CPUs - idle, cross-check)'),
    ('at', 'total_s', 'end-to-end added wall time'),
    ('ae', 'cpu_s', 'end-to-end added guest CPU time'),
)


def paired_half_line(runs, wl, mode, name, ncpu, rng):
    """Per rep: mode's added - 1/2 of perf -g's added (same frequency)."""
    a = paired_by_rep(runs, wl, mode, name, ncpu)
    h = paired_by_rep(runs, wl, 'pf' + mode[2:], name, ncpu)
    d = [a[k] - 0.5 * h[k] for k in a if k in h]
    if len(d) < MIN_PAIRS:
        return '        paired: %d reps < %d' % (len(d), MIN_PAIRS)
    t = ci(d, rng)
    return ('        paired, per rep %s added - 1/2 perf -g added: %s s over %d reps%s'
            % (mode_name(mode), fmt_dci(t), len(d),
               ' (> 0)' if t[1] > 0 else ' (< 0)' if t[2] < 0 else ' (spans 0)'))


def mode_name(mode):
    if mode == 'base':
        return 'unprofiled'
    if mode.startswith('sp'):
        return 'spulse record %s' % mode[2:]
    if mode.startswith('pn'):
        return 'perf (no -g) %s' % mode[2:]
    if mode.startswith('sn'):
        return 'spulse (null) %s' % mode[2:]
    return 'perf record -g %s' % mode[2:]


def main():
    runs, info, errors = parse(sys.argv[1])
    host = collections.defaultdict(list)
    with open(sys.argv[2]) as f:
        for line in f:
            k, _, v = line.rstrip('\n').partition(' ')
            host[k].append(v)
    rng = random.Random(11)
    ncpu = int(info.get('cpus', '2'))
    freqs = info.get('freqs', '999 4999').split()
    floor = info.get('floor_freqs', '').split()
    nullf = info.get('null_freqs', '').split()
    modes = ['base'] + [m for f in freqs for m in ('sp' + f, 'pf' + f)] + \
        ['pn' + f for f in floor] + ['sn' + f for f in nullf]
    nreps = {k: len(v) for k, v in runs.items()}

    print('bench-vm: one boot of %s (TCG, %d vCPUs, no PMU: event cpu-clock for both '
          'profilers); %s; %s'
          % (info.get('kernel', '?'), ncpu, info.get('perf', 'perf ?'),
             info.get('python', 'python ?')))
    if host.get('tree'):
        print('tree %s; host load average at start %s, at end %s; VM %s s'
              % (host['tree'][0], host.get('host_load_start', ['?'])[0],
                 host.get('host_load_end', ['?'])[0], host.get('vm_seconds', ['?'])[0]))
    wl_reps = [n for (wl, _), n in nreps.items() if wl != 'true']
    print('%s reps per mode, all runs interleaved in rotating order; medians with bootstrap '
          '95%% intervals (%d resamples)' % (
              ('%d' % min(wl_reps)) + ('' if min(wl_reps) == max(wl_reps)
                                       else '..%d' % max(wl_reps)) if wl_reps else '0', BOOT))
    print('added = PAIRED: per rep, mode minus the unprofiled run of the same rep; median and '
          'bootstrap interval over the reps')
    for e in errors:
        print('bench-vm: guest error: %s' % e)
    print()
    verdicts = []
    chosen = info.get('workloads', 'gt py').split()
    for wl, wname in WLS:
        if wl not in chosen:
            continue
        if not runs.get((wl, 'base')):
            print('%s: no unprofiled runs' % wname)
            continue
        what = ('gt -n %s (2 threads, frame pointers, static)' % info.get('gt_rounds', '?')
                if wl == 'gt' else
                '/usr/bin/python3 -I -S pywork.py %s (Debian\'s python3, no frame pointers)'
                % info.get('py_rounds', '?'))
        print('== %s ==' % what)
        print('steady state (the workload\'s own clock of its fixed work; guest CPU from '
              '/proc/stat user+nice+sys+irq+softirq over that window):')
        print('  %-20s %3s %24s %26s %6s %24s %24s %8s'
              % ('mode', 'n', 'work_s [95%]', 'added_s [95%]', 'slow', 'guest_cpu_s [95%]',
                 'added_cpu_s [95%]', 'cpu_idl'))
        res = {}
        for mode in modes:
            rs = runs.get((wl, mode))
            if not rs:
                continue
            w = ci(values(rs, 'work_s', ncpu), rng)
            c = ci(values(rs, 'wcpu_s', ncpu), rng)
            c2 = median(values(rs, 'wcpu2', ncpu))
            if mode == 'base':
                aw = ac = (float('nan'),) * 3
                base_w = w[0]
            else:
                aw = ci(paired(runs, wl, mode, 'work_s', ncpu), rng)
                ac = ci(paired(runs, wl, mode, 'wcpu_s', ncpu), rng)
            res[mode] = dict(aw=aw, ac=ac, ai=(float('nan'),) * 3 if mode == 'base' else
                             ci(paired(runs, wl, mode, 'wcpu2', ncpu), rng))
            print('  %-20s %3d %24s %26s %6s %24s %26s %8.2f'
                  % (mode_name(mode), len(rs), fmt_ci(w), fmt_dci(aw),
                     '-' if mode == 'base' else '%.3f' % (w[0] / base_w),
                     fmt_ci(c, 5, 2), fmt_dci(ac, 2), c2))
        print('end to end (fork to exit of the command, start-up and teardown included) and '
              'costs:')
        print('  %-20s %24s %26s %22s %16s %16s %9s %9s %9s %8s %8s'
              % ('mode', 'e2e_s [95%]', 'e2e_added_s [95%]', 'e2e_added_cpu_s',
                 'profiler_cpu_s', 'workload_cpu_s', 'hdl_us', 'hdl_share', 'samples',
                 'bytes', 'B/smp'))
        for mode in modes:
            rs = runs.get((wl, mode))
            if not rs:
                continue
            t = ci(values(rs, 'total_s', ncpu), rng)
            if mode == 'base':
                at = ae = (float('nan'),) * 3
                pc = float('nan')
                wc = median(values(rs, 'self_cpu_s', ncpu))
            else:
                at = ci(paired(runs, wl, mode, 'total_s', ncpu), rng)
                ae = ci(paired(runs, wl, mode, 'cpu_s', ncpu), rng)
                pc = median(values(rs, 'self_cpu_s', ncpu))
                wc = median(values(rs, 'child_cpu_s', ncpu))
            res[mode].update(at=at, ae=ae)
            hus = values(rs, 'hus', ncpu)
            hsh = values(rs, 'hshare', ncpu)
            smp = values(rs, 'samples', ncpu)
            byt = values(rs, 'bytes', ncpu)
            bps = values(rs, 'bps', ncpu)
            res[mode]['bps'] = bps
            res[mode]['bps_by_rep'] = {r['rep']: metric(r, 'bps', ncpu) for r in rs}
            print('  %-20s %24s %26s %22s %16s %16.2f %9s %9s %9s %8s %8s'
                  % (mode_name(mode), fmt_ci(t), fmt_dci(at), fmt_dci(ae, 2),
                     '-' if pc != pc else '%.2f' % pc, wc,
                     '%.1f' % median(hus) if hus else '-',
                     '%.1f%%' % (100 * median(hsh)) if hsh else '-',
                     '%d' % median(smp) if smp else '-',
                     '%d' % median(byt) if byt else '-',
                     '%.1f' % median(bps) if bps else '-'))
        for f in nullf:
            seen = values(runs.get((wl, 'sn' + f), []), 'spulse_seen', ncpu)
            if seen:
                print('  (%s: the handler saw %d overflows by the done line, median; it took '
                      'none)' % (mode_name('sn' + f), median(seen)))
        # verdicts per frequency
        for f in freqs:
            sp, pf = res.get('sp' + f), res.get('pf' + f)
            if not sp or not pf:
                continue
            halves = {}		# key -> (1/2 of perf -g's interval, its paired reps)
            for key, name, m in VERDICT_METRICS:
                hp = paired(runs, wl, 'pf' + f, name, ncpu, scale=0.5)
                half = ci(hp, rng)
                halves[key] = (half, len(hp))
                v = verdict(sp[key], half, pf[key],
                            min(len(hp), len(paired(runs, wl, 'sp' + f, name, ncpu))))
                line = ('%s %s Hz, %s: spulse %s s vs 1/2 of perf -g %s s (target <= 1/2): %s'
                        % (wname, f, m, fmt_dci(sp[key]), fmt_dci(half), v))
                if f == '999' and key in ('aw', 'ac'):
                    verdicts.append('target ' + line)
                    verdicts.append(paired_half_line(runs, wl, 'sp' + f, name, ncpu, rng))
                else:
                    verdicts.append('  info ' + line)
            # the floor: perf without -g (the sampling interrupt and a
            # ring-buffer write) against 1/2 of perf -g, the same way
            # and spulse's null handler (the event alone), the same way
            for ref, tag, who in (('pn', 'floor', 'perf without -g'),
                                  ('sn', ' null', 'spulse sample_null=1')):
                rr = res.get(ref + f)
                for key, name, m in VERDICT_METRICS[:2] if rr else ():
                    half, nh = halves[key]	# the interval the targets above used
                    v = verdict(rr[key], half, pf[key],
                                min(nh, len(paired(runs, wl, ref + f, name, ncpu))))
                    v = {'MET': 'BELOW 1/2', 'NOT MET': 'ABOVE 1/2'}.get(v, v)
                    verdicts.append('  %s %s %s Hz, %s: %s %s s vs 1/2 of perf -g %s s: %s'
                                    % (tag, wname, f, m, who, fmt_dci(rr[key]),
                                       fmt_dci(half), v))
                    verdicts.append(paired_half_line(runs, wl, ref + f, name, ncpu, rng))
            # bytes per sample: per rep, perf.data B/sample / spool B/sample
            k = 20 if wl == 'gt' else 5
            rat = [pf['bps_by_rep'][r] / v for r, v in sp['bps_by_rep'].items()
                   if v and pf['bps_by_rep'].get(r)]
            if rat:
                m, lo, hi = ci(rat, rng)
                v = ('INCONCLUSIVE (%d paired reps < %d)' % (len(rat), MIN_PAIRS)
                     if len(rat) < MIN_PAIRS else
                     'MET' if lo >= k else 'NOT MET' if hi < k else 'INCONCLUSIVE')
                line = ('%s %s Hz, spool bytes/sample %.1f vs perf.data %.1f = 1/%.1f '
                        '[1/%.1f..1/%.1f] (target <= 1/%d): %s'
                        % (wname, f, median(sp['bps']), median(pf['bps']), m, lo, hi, k, v))
                verdicts.append(('target ' if f == '999' else '  info ') + line)
        print()

    # start-up: /bin/true under each profiler
    if runs.get(('true', 'base')):
        print('== start-up: /bin/true under each profiler at 999 Hz (module load, kallsyms '
              'copy, unwind tables / perf\'s synthesis and build-id pass) ==')
        print('  %-20s %3s %24s %26s %22s %26s %14s %9s'
              % ('mode', 'n', 'e2e_s [95%]', 'added_s [95%]', 'guest_cpu_s [95%]',
                 'added_cpu_s [95%]', 'profiler_cpu_s', 'bytes'))
        for mode in ('base', 'sp999', 'pf999'):
            rs = runs.get(('true', mode))
            if not rs:
                continue
            t = ci(values(rs, 'total_s', ncpu), rng)
            c = ci(values(rs, 'cpu_s', ncpu), rng)
            if mode == 'base':
                at = ac = (float('nan'),) * 3
            else:
                at = ci(paired(runs, 'true', mode, 'total_s', ncpu), rng)
                ac = ci(paired(runs, 'true', mode, 'cpu_s', ncpu), rng)
            byt = values(rs, 'bytes', ncpu)
            print('  %-20s %3d %24s %26s %22s %26s %14s %9s'
                  % (mode_name(mode), len(rs), fmt_ci(t), fmt_dci(at), fmt_ci(c, 5, 2),
                     fmt_dci(ac, 2),
                     '-' if mode == 'base' else '%.2f' % median(values(rs, 'self_cpu_s', ncpu)),
                     '%d' % median(byt) if byt else '-'))
        ks = values(runs.get(('true', 'sp999'), []), 'kallsyms_bytes', ncpu)
        if ks:
            print('  (spulse record also writes FILE.kallsyms, %d bytes, not counted in bytes '
                  'or B/smp)' % median(ks))
        print()
    print('Columns: slow = median work_s / unprofiled median; cpu_idl = guest CPU from '
          '/proc/stat as work_s x CPUs - (idle + iowait), a cross-check (TCG on a loaded host '
          'loses ticks, NO_HZ idle time is measured); e2e_added_cpu_s: /proc/stat busy over '
          'the whole command; profiler_cpu_s: utime+stime of the profiler process itself (spulse '
          'record drains in process; perf record), read from its zombie\'s /proc/PID/stat; '
          'workload_cpu_s: the workload\'s (its cutime+cstime); hdl_us: spulse.ko handler_ns / '
          'samples_taken (debugfs stats read when the workload prints its done line); '
          'hdl_share: handler_ns / (work_s x CPUs); samples: spulse record\'s summary / perf\'s '
          '"(N samples)"; bytes: the spool or perf.data.')
    for k in ('perf_event_max_sample_rate_end', 'perf_throttle_lines'):
        if k in info:
            print('  %s %s' % (k, info[k]))
    for c in host.get('spool_check', []):
        print('  last spool %s: spulse check %s' % tuple(c.split(' ', 1)))
    print()
    for v in verdicts:
        print(v)
    return 0


if __name__ == '__main__':
    sys.exit(main())
