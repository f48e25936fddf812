#!/usr/bin/env python3
"""make bench-insns: the table, from the guest's instruction counts.

usage: table.py [--top N] OUTDIR

OUTDIR (build/bench-insns) holds insns.txt (the TCG plugin's snapshots,
bench/insns/insns.c), marks.txt (the guest's label for each marker, in
order), runs.txt (one line per run: samples, bytes, switches) and host.txt.

Per run: whole = the snapshots at its start, done and end markers (the
command from fork to exit), window = the snapshot at done (the workload's
start line to its done line). Added = the run's count minus the mean of the
unprofiled runs at the same length. Per mode, over its runs at both
lengths: the least-squares slope of added instructions against the
samples the tool reported (pingpong: against the context switches it
counted) is the cost per sample (steady: window; marginal: whole), the
intercept of the whole-command line the start-up + teardown. The spread is
the range of the same slope/intercept taken per rep (rep i at both
lengths). Verdicts compare the worst rep of spulse with the best rep of
perf (MET), the best with the worst (NOT MET), else UNDECIDED.
Exits 1, printing no verdict, when the plugin's output, a marker or a run
is missing.
"""
import os
import sys

MODE_NAMES = {
    'base': 'unprofiled',
    'sp': 'spulse record',
    'pg': 'perf record -g',
    'pn': 'perf (no -g)',
    'sn': 'spulse (null)',
    'pd': 'perf dwarf',
    'so': 'spulse --off-cpu',
    'ps': 'perf sched_switch -g',
    'pS': 'perf sched record',
}
WL_NAMES = {
    'gt': 'gt (build/workload/gt, 2 frame-pointer threads, cpu-clock 999 Hz)',
    'py': 'python3 (Debian\'s, no frame pointers: pywork.py, cpu-clock 999 Hz)',
    'pp': 'pingpong (context-switch storm, off-CPU; per switch)',
}


class Missing(Exception):
    pass


def die(msg):
    print('bench-insns: FAILED: %s' % msg, file=sys.stderr)
    print('bench-insns: FAILED: %s (no verdict printed)' % msg)
    sys.exit(1)


def read_snapshots(path):
    """[(total, kernel, user, {function: insns})] indexed by marker seq."""
    if not os.path.exists(path):
        raise Missing('%s does not exist: the plugin was not loaded' % path)
    snaps, header, end = [], None, None
    cur = None
    with open(path) as f:
        for line in f:
            t, _, rest = line.rstrip('\n').partition(' ')
            if t == 'F':
                n, _, name = rest.partition(' ')
                if cur is None:
                    raise Missing('%s: F line before any S line' % path)
                cur[3][name] = cur[3].get(name, 0) + int(n)
            elif t == 'S':
                seq, _vcpu, total, kernel, user = (int(x) for x in rest.split())
                if seq != len(snaps):
                    raise Missing('%s: snapshot %d where %d was expected' % (path, seq, len(snaps)))
                cur = (total, kernel, user, {})
                snaps.append(cur)
            elif t == 'H':
                header = rest
            elif t == 'E':
                end = rest.split()
            elif t == 'X':
                raise Missing('the plugin reported: %s' % rest)
    if header is None:
        raise Missing('%s has no header line: not the plugin\'s output' % path)
    if end is None:
        raise Missing('%s has no end line: QEMU did not exit cleanly' % path)
    if int(end[0]) != len(snaps):
        raise Missing('%s: %s markers at exit, %d snapshots' % (path, end[0], len(snaps)))
    return snaps


def kv(line):
    return dict(w.split('=', 1) for w in line.split() if '=' in w)


def slope(points):
    """least-squares (slope, intercept) of [(x, y)]"""
    n = len(points)
    mx = sum(p[0] for p in points) / n
    my = sum(p[1] for p in points) / n
    sxx = sum((p[0] - mx) ** 2 for p in points)
    if sxx == 0:
        raise Missing('all runs of a mode have the same sample count: no slope')
    b = sum((p[0] - mx) * (p[1] - my) for p in points) / sxx
    return b, my - b * mx


def g(v):
    return '{:,.0f}'.format(v)


def spread(vals, scale=1.0):
    return '[%s..%s]' % (g(min(vals) / scale), g(max(vals) / scale))


def main():
    args = sys.argv[1:]
    top = 8
    if args[:1] == ['--top']:
        top = int(args[1])
        args = args[2:]
    if len(args) != 1:
        print(__doc__.split('\n\n')[1], file=sys.stderr)
        sys.exit(2)
    out = args[0]
    try:
        snaps = read_snapshots(os.path.join(out, 'insns.txt'))
    except Missing as e:
        die(str(e))
    try:
        with open(os.path.join(out, 'marks.txt')) as f:
            labels = [l.rstrip('\n') for l in f]
        with open(os.path.join(out, 'runs.txt')) as f:
            runlines = f.read().splitlines()
    except OSError as e:
        die('the guest left no %s' % e.filename)
    if len(labels) != len(snaps):
        die('the guest executed %d markers, the plugin saw %d' % (len(labels), len(snaps)))
    if not labels or labels[0] != 'open' or labels[-1] != 'close':
        die('marks.txt does not run from "open" to "close"')
    errors = [l for l in runlines if l.startswith('error')]
    if errors:
        die('the guest reported errors:\n  ' + '\n  '.join(errors))
    if 'done' not in runlines:
        die('runs.txt has no "done" line: the guest did not finish')
    at = {}
    for i, l in enumerate(labels):
        kind, _, tag = l.partition(' ')
        at[(kind, tag)] = i

    meta = [l for l in runlines if not l.startswith('run ')]
    runs = {}		# (wl, mode) -> [run dict]
    for l in runlines:
        if not l.startswith('run '):
            continue
        r = kv(l)
        tag = 'rep=%s wl=%s mode=%s len=%s' % (r['rep'], r['wl'], r['mode'], r['len'])
        idx = []
        for kind in ('pre', 'start', 'done', 'end'):
            if (kind, tag) not in at:
                die('no "%s" marker for the run %s' % (kind, tag))
            idx.append(at[(kind, tag)])
        if idx != list(range(idx[0], idx[0] + 4)):
            die('the markers of %s are not consecutive: %s' % (tag, idx))
        _, s, d, e = (snaps[i] for i in idx)
        r['whole'] = s[0] + d[0] + e[0]
        r['window'] = d[0]
        r['wfuncs'] = dict(d[3])
        r['wfuncs']['[user]'] = d[2]
        r['startup'] = s[0]
        r['teardown'] = e[0]
        r['phases'] = {'start-up': s, 'teardown': e}
        for k in ('rep', 'len', 'samples', 'bytes', 'switches'):
            r[k] = int(r[k])
        runs.setdefault((r['wl'], r['mode']), []).append(r)

    with open(os.path.join(out, 'host.txt')) as f:
        host = f.read().splitlines()
    for l in host + meta:
        if l.split(' ', 1)[0] in ('tree', 'qemu', 'plugin_header', 'kernel', 'perf', 'python',
                                  'cpus', 'lens', 'reps', 'vm_seconds', 'perf_throttle_lines'):
            print('  ' + l)
    try:
        b = open(os.path.join(out, 'spulse-syms-begin.txt')).read()
        e = open(os.path.join(out, 'spulse-syms-end.txt')).read()
        if b != e:
            print('  NOTE: spulse.ko loaded at another address at the end than at the start: '
                  'its functions may be misnamed below')
    except OSError:
        pass
    print('  counts: guest instructions (all vCPUs, kernel + user) from the TCG plugin, '
          'one TCG thread; %d markers' % len(labels))

    wls = []
    for (wl, _m) in runs:
        if wl not in wls:
            wls.append(wl)
    verdicts = []
    for wl in wls:
        base = runs.get((wl, 'base'))
        if not base:
            die('%s: no unprofiled runs' % wl)
        lens = sorted({r['len'] for r in base})
        if len(lens) != 2:
            die('%s: the unprofiled runs have lengths %s, not two' % (wl, lens))
        per = 'switch' if wl == 'pp' else 'sample'
        xkey = 'switches' if wl == 'pp' else 'samples'
        bmean = {}
        for L in lens:
            rs = [r for r in base if r['len'] == L]
            fun = {}
            for r in rs:
                for k, v in r['wfuncs'].items():
                    fun[k] = fun.get(k, 0) + v / len(rs)
            bmean[L] = (sum(r['whole'] for r in rs) / len(rs),
                        sum(r['window'] for r in rs) / len(rs), fun)
        print()
        print('== %s, lengths %s ==' % (WL_NAMES.get(wl, wl), ' / '.join(map(str, lens))))
        print('  %-20s %3s %17s %28s %28s %28s %12s'
              % ('mode', 'n', '%ss %s|%s' % (per if per == 'sample' else 'switche', 'short', 'long'),
                 'steady insns/%s [reps]' % per, 'marginal insns/%s [reps]' % per,
                 'start-up+teardown [reps]', 'bytes/' + per))
        res = {}
        for L in lens:
            rs = [r for r in base if r['len'] == L]
            print('  %-20s %3d %17s %28s %28s %28s %12s'
                  % ('unprofiled len %d' % L, len(rs), '-', 'window %sM' % g(bmean[L][1] / 1e6),
                     'whole %sM' % g(bmean[L][0] / 1e6),
                     spread([r['whole'] for r in rs], 1e6) + 'M', '-'))
        for (w, mode), rs in runs.items():
            if w != wl or mode == 'base':
                continue
            pw = [(r[xkey], r['whole'] - bmean[r['len']][0]) for r in rs]
            pn = [(r[xkey], r['window'] - bmean[r['len']][1]) for r in rs]
            try:
                mb, ma = slope(pw)
                sb, _ = slope(pn)
            except Missing as e:
                die('%s %s: %s' % (wl, mode, e))
            byrep = {}
            for r in rs:
                byrep.setdefault(r['rep'], {})[r['len']] = r
            rep_m, rep_a, rep_s, rep_b = [], [], [], []
            for rep, d in sorted(byrep.items()):
                if len(d) != 2:
                    continue
                s, l = d[lens[0]], d[lens[1]]
                dx = l[xkey] - s[xkey]
                if dx <= 0:
                    die('%s %s rep %d: the long run has no more %ss than the short one'
                        % (wl, mode, rep, per))
                m = ((l['whole'] - bmean[lens[1]][0]) - (s['whole'] - bmean[lens[0]][0])) / dx
                rep_m.append(m)
                rep_a.append((s['whole'] - bmean[lens[0]][0]) - m * s[xkey])
                rep_s.append(((l['window'] - bmean[lens[1]][1]) -
                              (s['window'] - bmean[lens[0]][1])) / dx)
                # bytes added per added sample: what a longer recording
                # costs, its definitions amortized as far as the lengths do
                if l['bytes'] and s['bytes']:
                    rep_b.append((l['bytes'] - s['bytes']) / dx)
            if not rep_m:
                die('%s %s: no rep ran at both lengths' % (wl, mode))
            long_rs = [r for r in rs if r['len'] == lens[1] and r[xkey]]
            bps = [r['bytes'] / r[xkey] for r in long_rs]
            xs = lambda L: '/'.join(str(r[xkey]) for r in rs if r['len'] == L)
            nx = '%s|%s' % (g(sum(r[xkey] for r in rs if r['len'] == lens[0]) /
                              max(1, sum(1 for r in rs if r['len'] == lens[0]))),
                            g(sum(r[xkey] for r in rs if r['len'] == lens[1]) /
                              max(1, sum(1 for r in rs if r['len'] == lens[1]))))
            _ = xs
            # per function: the slope of its added window count
            names = set()
            for r in rs:
                names.update(r['wfuncs'])
            fs = []
            for name in names:
                pts = [(r[xkey], r['wfuncs'].get(name, 0) - bmean[r['len']][2].get(name, 0))
                       for r in rs]
                fs.append((slope(pts)[0], name))
            fs.sort(reverse=True)
            bps_all = sum(bps) / len(bps) if bps else None
            res[mode] = dict(rep_m=rep_m, rep_a=rep_a, rep_s=rep_s, bps=bps, funcs=fs,
                             rep_b=rep_b, c_rep_m=mb, c_rep_a=ma, c_rep_s=sb, c_bps=bps_all,
                             c_rep_b=sum(rep_b) / len(rep_b) if rep_b else None)
            print('  %-20s %3d %17s %28s %28s %28s %12s'
                  % (MODE_NAMES.get(mode, mode), len(rs), nx,
                     '%s %s' % (g(sb), spread(rep_s)), '%s %s' % (g(mb), spread(rep_m)),
                     '%sM %s' % (g(ma / 1e6), spread(rep_a, 1e6) + 'M'),
                     '%.1f' % (sum(bps) / len(bps)) if bps else '-'))
        print('  top kernel functions, steady-state insns per %s (window slope; [user] = '
              'all user-mode code; [user:exe] of it below 4 GiB: python3, gt, pingpong; '
              '[user:pie]: PIE executables, spulse and perf; [user:lib]: shared '
              'libraries, both):' % per)
        for mode, v in res.items():
            print('    %-20s %s' % (MODE_NAMES.get(mode, mode), ', '.join(
                '%s %s' % (name, g(s)) for s, name in v['funcs'][:top])))
        print('  start-up (pre->start) and teardown (done->end), mean per run, '
              'minus unprofiled; M instructions: total = kernel + user, top kernel functions:')
        for (w, mode), rs in runs.items():
            if w != wl or mode == 'base':
                continue
            for ph in ('start-up', 'teardown'):
                def mean_of(runs_, i):
                    return sum(r['phases'][ph][i] for r in runs_) / len(runs_)
                tot = [mean_of(rs, i) - mean_of(base, i) for i in range(3)]
                fun = {}
                for r in rs:
                    for k, v in r['phases'][ph][3].items():
                        fun[k] = fun.get(k, 0) + v / len(rs)
                for r in base:
                    for k, v in r['phases'][ph][3].items():
                        fun[k] = fun.get(k, 0) - v / len(base)
                tf = sorted(((n, v) for n, v in fun.items() if not n.startswith('[user:')),
                            key=lambda x: -x[1])[:top]
                print('    %-20s %-9s %7.1f = %6.1f + %5.1f: %s'
                      % (MODE_NAMES.get(mode, mode), ph, tot[0] / 1e6, tot[1] / 1e6,
                         tot[2] / 1e6, ', '.join('%s %.1f' % (n, v / 1e6) for n, v in tf)))
        verdicts += wl_verdicts(wl, res)
    print()
    print('== verdicts (exact counts; MET: spulse\'s worst rep vs perf\'s best, NOT MET: '
          'the reverse fails too) ==')
    for v in verdicts:
        print(v)


def verdict(sp, pf, k):
    """sp, pf: per-rep values; target sp <= k * pf"""
    if max(sp) <= k * min(pf):
        return 'MET'
    if min(sp) > k * max(pf):
        return 'NOT MET'
    return 'UNDECIDED (the reps\' spreads overlap)'


def ratio_line(wl, what, sp_name, sp, pf_name, pf, k, kname, tag='target'):
    """sp, pf: (value over all runs, [per-rep values])"""
    if sp is None or pf is None:
        return '%s %s: %s: no verdict, %s not run' % (
            tag, wl, what, sp_name if sp is None else pf_name)
    r = sp[0] / pf[0] if pf[0] else float('inf')
    return ('%s %s: %s: %s %s %s vs %s %s %s = %.2fx (target <= %s): %s'
            % (tag, wl, what, sp_name, g(sp[0]), spread(sp[1]), pf_name,
               g(pf[0]), spread(pf[1]), r, kname, verdict(sp[1], pf[1], k)))


def wl_verdicts(wl, res):
    def get(mode, key):
        if mode not in res or not res[mode][key]:
            return None
        return res[mode]['c_' + key], res[mode][key]
    out = []
    if wl in ('gt', 'py'):
        name = {'gt': 'FP workload (gt)', 'py': 'python3'}[wl]
        out.append(ratio_line(name, 'marginal insns/sample', 'spulse', get('sp', 'rep_m'),
                              'perf -g', get('pg', 'rep_m'), 0.6, '0.6x'))
        if wl == 'gt':
            out.append(ratio_line(name, 'steady-state in-window insns/sample', 'spulse',
                                  get('sp', 'rep_s'), 'perf -g', get('pg', 'rep_s'), 1.0, '1x'))
        else:
            out.append(ratio_line(name, 'marginal insns/sample', 'spulse', get('sp', 'rep_m'),
                                  'perf dwarf', get('pd', 'rep_m'), 0.1, '1/10'))
        out.append(ratio_line(name, 'start-up+teardown insns', 'spulse', get('sp', 'rep_a'),
                              'perf -g', get('pg', 'rep_a'), 0.25, '1/4'))
        k = 20 if wl == 'gt' else 5
        out.append(ratio_line(name, 'bytes/sample', 'spulse', get('sp', 'bps'),
                              'perf -g', get('pg', 'bps'), 1.0 / k, '1/%d' % k))
        out.append(ratio_line(name, 'marginal bytes/sample', 'spulse', get('sp', 'rep_b'),
                              'perf -g', get('pg', 'rep_b'), 1.0 / k, '1/%d' % k, '  info'))
        if wl == 'py':
            out.append(ratio_line(name, 'bytes/sample', 'spulse', get('sp', 'bps'),
                                  'perf dwarf', get('pd', 'bps'), 1.0 / k, '1/%d' % k, '  info'))
        for ref, who in (('pn', 'perf without -g'), ('sn', 'spulse null handler')):
            if ref in res:
                out.append(ratio_line(name, 'marginal insns/sample', who, get(ref, 'rep_m'),
                                      'perf -g', get('pg', 'rep_m'), 0.6, '0.6x', '  info'))
    elif wl == 'pp':
        name = 'off-CPU (pingpong)'
        # issue 24: per switch <= 0.6x of the cheaper of the two perf modes
        # (the target line); the other one's ratio as information
        refs = [r for r in ('ps', 'pS') if get(r, 'rep_m')]
        cheaper = min(refs, key=lambda r: get(r, 'rep_m')[0]) if refs else None
        for ref, who in (('ps', 'perf sched_switch -g'), ('pS', 'perf sched record')):
            out.append(ratio_line(name, 'marginal insns/switch', 'spulse --off-cpu',
                                  get('so', 'rep_m'), who, get(ref, 'rep_m'), 0.6, '0.6x',
                                  'target' if ref == cheaper else '  info'))
            out.append(ratio_line(name, 'bytes/switch', 'spulse --off-cpu', get('so', 'bps'),
                                  who, get(ref, 'bps'), 0.1, '1/10', '  info'))
    return out


if __name__ == '__main__':
    main()
