#!/usr/bin/env python3
"""Host checker of the first-sample suite (tests/e2e/firstsample_run.sh).

usage: firstsample_check.py OUT SPULSE RESULT

OUT/CASE/ holds what tests/e2e/firstsample_guest.sh left. Checks:
  wrapinj (dyn-nofp dyn-fp static-fp static-nofp): the inclusive off-CPU
    time `spulse report --off-cpu --json` gives fs_sleep_wait and
    fs_read_wait (the callers of glibc's nanosleep and read) is within 2%
    of the injector's own truth (wall minus CPU time inside each call)
    over the whole run, which began at the command's entry point (so its
    first second is in it);
  clock: of the samples whose leaf is in [vdso], >= 99% have cl_worker in
    their stack (read with tests/e2e/spool.py, symbols from nm);
  dlwait: every dlopen'ed library got its table mapped (no timeout); the
    waits are printed (median and worst);
  notable: fpspin (FP-less, %rbp = 1 while it spins) recorded without the
    ptrace hold, so it runs before its map set reaches the kernel: the
    module's stats (copied after the command exited) count >= 1 cut stack
    as ustack_cut_no_table_yet, the ustack_cut_* causes add up to
    ustack_truncated (samples only: no off-CPU here), the spool has cut
    fpspin samples at its start, and >= 99% of its samples in the second
    half of the run are whole (not truncated, reaching fp_main);
  demo: gt (the demo workload) recorded with --off-cpu: flame and report
    agree on every function's self and total (tests/cli/flame_report_agree.py)
    for the samples and for the off-CPU time; a doctored folded output (one
    sample moved between two lines) is refused by the same comparison.
Prints one line per check and a truth table; writes "passed failed" to
RESULT.
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spool import ElfSyms, Spool, run  # noqa: E402

OUT, SPULSE, RESULT = sys.argv[1], sys.argv[2], sys.argv[3]
MS = 1e6
npass = nfail = 0


def check(name, ok, detail):
    global npass, nfail
    print('%s %s: %s' % ('PASS' if ok else 'FAIL', name, detail))
    if ok:
        npass += 1
    else:
        nfail += 1


def rc_of(case):
    try:
        with open(os.path.join(OUT, case, 'record.rc')) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def log_of(case):
    try:
        with open(os.path.join(OUT, case, 'record.log'), errors='replace') as f:
            return f.read()
    except OSError:
        return ''


def notes(case):
    """The record log's timing lines: preload, first MAP, bound exceeded."""
    out = []
    for line in log_of(case).splitlines():
        if 'preloaded' in line or 'still being built' in line:
            out.append(line.strip())
    maps = [line for line in log_of(case).splitlines()
            if 'unwind trace' in line and ' op 3,' in line]
    if maps:
        out.append('first MAP ' + maps[0].split('unwind trace: ')[-1])
    return out


rows = []
for case in ('dyn-nofp', 'dyn-fp', 'static-fp', 'static-nofp'):
    d = os.path.join(OUT, case)
    truth = {}
    try:
        with open(os.path.join(d, 'truth.json')) as f:
            for line in f:
                o = json.loads(line)
                truth[o['func']] = o
    except (OSError, ValueError) as e:
        check('%s.truth' % case, False, 'record rc %s, no truth: %s; %s'
              % (rc_of(case), e, log_of(case)[-300:]))
        continue
    rc, out, err = run([SPULSE, 'report', os.path.join(d, 'spulse.spulse'),
                        '--off-cpu', '--json', '--top', '100000'])
    try:
        rep = {r['function']: r['total'] for r in json.loads(out)['rows']}
    except (ValueError, KeyError, TypeError):
        check('%s.report' % case, False, 'spulse report rc %d: %s' % (rc, (err or out)[-300:]))
        continue
    for fn in ('fs_sleep_wait', 'fs_read_wait'):
        t = truth.get(fn)
        got = rep.get(fn, 0)
        if not t or not t['total_ns']:
            check('%s.%s' % (case, fn), False, 'no truth')
            continue
        diff = (got - t['total_ns']) / t['total_ns'] * 100
        rows.append((case, fn, t['n'], t.get('wall_ns', 0) / MS, t['total_ns'] / MS,
                     t['first_s_ns'] / MS, got / MS, diff))
        check('%s.%s_within_2pct' % (case, fn), abs(diff) <= 2.0,
              'off-CPU under %s %.1f ms of a known %.1f ms (%+.2f%%)'
              % (fn, got / MS, t['total_ns'] / MS, diff))
    for n in notes(case):
        print('  %s: %s' % (case, n))

print('\ntruth table (off-CPU time under the caller of glibc\'s wrapper):')
print('(truth = wall time inside the call minus the thread\'s CPU time in it)')
print('%-12s %-14s %5s %9s %10s %12s %10s %8s' % ('case', 'function', 'waits', 'wall ms',
                                                  'truth ms', '1st s truth', 'spool ms', 'diff'))
for r in rows:
    print('%-12s %-14s %5d %9.1f %10.1f %12.1f %10.1f %+7.2f%%' % r)
print()

# clock: samples in the vDSO reach cl_worker
d = os.path.join(OUT, 'clock')
try:
    sp = Spool(SPULSE, os.path.join(d, 'spulse.spulse'))
    elf = ElfSyms(os.path.join(OUT, 'bin', 'clockloop'))
    base = os.path.basename(elf.path)
    invdso = reach = 0
    for _, stack in sp.samples:
        frames = sp.frames_of(stack)
        user = [fr for fr in frames if 'module' in fr]
        if not user:
            continue
        leaf = sp.modules.get(user[0]['module'], {})
        if leaf.get('path') != '[vdso]':
            continue
        invdso += 1
        for fr in user[1:]:
            m = sp.modules.get(fr['module'], {})
            if os.path.basename(m.get('path', '')) == base and \
                    elf.name(elf.rel_to_vaddr(fr['addr'])) == 'cl_worker':
                reach += 1
                break
    share = reach / invdso * 100 if invdso else 0
    check('clock.vdso_samples_reach_worker', invdso >= 50 and share >= 99.0,
          '%d of %d samples in the vDSO reach cl_worker (%.2f%%; %d samples in all)'
          % (reach, invdso, share, len(sp.samples)))
except (OSError, RuntimeError, KeyError, ValueError) as e:
    check('clock.vdso_samples_reach_worker', False, 'record rc %s: %s' % (rc_of('clock'), e))
for n in notes('clock'):
    print('  clock: %s' % n)

# dlwait: the waits, measured in the process
waits, timeouts = [], 0
for line in log_of('dlwait').splitlines():
    p = line.split()
    if len(p) == 3 and p[0] == 'dlwait':
        if p[2] == 'timeout':
            timeouts += 1
        else:
            waits.append(float(p[2]))
ok = bool(waits) and not timeouts
check('dlwait.every_library_mapped', ok,
      '%d libraries, %d timed out; wait for the table after dlopen: median %.1f ms, '
      'worst %.1f ms, first (table built) %.1f ms'
      % (len(waits) + timeouts, timeouts, statistics.median(waits) if waits else -1,
         max(waits) if waits else -1, waits[0] if waits else -1))

# notable: cut stacks before the table, counted by cause; whole afterwards
CUTS = ('no_table_yet', 'no_table', 'no_row', 'table_unknown', 'depth',
        'unreadable', 'bad_frame', 'compat32')
d = os.path.join(OUT, 'notable')
st = {}
try:
    with open(os.path.join(d, 'stats')) as f:
        for line in f:
            p = line.split()
            if len(p) == 2:
                st[p[0]] = p[1]
except OSError:
    pass
cuts = {c: int(st.get('ustack_cut_' + c, -1)) for c in CUTS}
trunc = int(st.get('ustack_truncated', -1))
check('notable.kernel_counts_no_table_yet',
      bool(st) and cuts['no_table_yet'] >= 1 and
      sum(cuts.values()) == trunc and min(cuts.values()) >= 0,
      'ustack_truncated %d = %s' % (trunc, ' + '.join(
          '%s %d' % (c, v) for c, v in cuts.items())) if st else
      'no stats copy taken while the command ran (record rc %s)'
      % rc_of('notable'))
try:
    sp = Spool(SPULSE, os.path.join(d, 'spulse.spulse'))
    elf = ElfSyms(os.path.join(OUT, 'bin', 'fpspin'))
    base = os.path.basename(elf.path)
    _, out, _ = run([SPULSE, 'dump', os.path.join(d, 'spulse.spulse')])
    timed = []  # (time_ns, thread, stack) of the samples, in file order
    for line in out.splitlines():
        if line.startswith('sample '):
            f = dict(kv.split('=', 1) for kv in line.split()[1:] if '=' in kv)
            timed.append((int(f['time_ns']), int(f['thread']), int(f['stack'])))
    fsp = [(t, stk) for t, th, stk in timed
           if sp.threads.get(th, {}).get('comm', '').startswith('fpspin')]
    if not fsp:
        raise RuntimeError('no fpspin samples in the spool')
    t0, t1 = min(t for t, _ in fsp), max(t for t, _ in fsp)
    mid = t0 + (t1 - t0) / 2

    def whole(stk):
        """No truncated marker, and the outermost frame is fpspin's _start
        (fp_spin's stacks and the exit path's alike)."""
        frames = sp.frames_of(stk)
        if any(fr['kind'].startswith('trunc') or fr['kind'] == '3' for fr in frames):
            return False
        root = frames[-1]
        m = sp.modules.get(root.get('module'), {})
        return 'module' in root and os.path.basename(m.get('path', '')) == base and \
            elf.name(elf.rel_to_vaddr(root['addr'])) == '_start'
    first = [stk for t, stk in fsp if t < mid]
    late = [stk for t, stk in fsp if t >= mid]
    cut_first = sum(1 for stk in first if any(
        fr['kind'].startswith('trunc') or fr['kind'] == '3' for fr in sp.frames_of(stk)))
    late_whole = sum(1 for stk in late if whole(stk))
    share = late_whole / len(late) * 100 if late else 0
    check('notable.cut_at_start_whole_later',
          cut_first >= 1 and len(late) >= 50 and share >= 99.0,
          'first half: %d of %d fpspin samples cut (truncated marker); second half: '
          '%d of %d whole '
          '(%.2f%%)' % (cut_first, len(first), late_whole, len(late), share))
except (OSError, RuntimeError, KeyError, ValueError) as e:
    check('notable.cut_at_start_whole_later', False,
          'record rc %s: %s' % (rc_of('notable'), e))
for n in notes('notable'):
    print('  notable: %s' % n)

# demo: flame and report agree on every function's total
AGREE = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'cli',
                     'flame_report_agree.py')
demo = os.path.join(OUT, 'demo', 'spulse.spulse')
for what, extra in (('samples', []), ('offcpu', ['--off-cpu'])):
    rc, out, err = run([sys.executable, AGREE, SPULSE, demo] + extra)
    last = (out.strip().splitlines() or [err.strip()])[-1]
    check('demo.flame_report_agree_%s' % what,
          rc == 0 and ' 0 samples' not in last,
          '%s%s' % (last, '' if rc == 0 else ' | ' + ' | '.join(
              out.strip().splitlines()[:5]) + ' (record rc %s)' % rc_of('demo')))
rc, fold, _ = run([SPULSE, 'flame', demo, '--folded'])
lines = fold.splitlines()
# a line whose leaf differs from the first line's (a sample moved between
# them changes both leaves' self totals)
j = next((i for i, line in enumerate(lines) if i and line.rpartition(' ')[0].split(';')[-1]
          != lines[0].rpartition(' ')[0].split(';')[-1]), None) if rc == 0 and lines else None
if j is not None and int(lines[j].rpartition(' ')[2]) >= 1:
    a, b = lines[0].rpartition(' '), lines[j].rpartition(' ')
    lines[0] = '%s %d' % (a[0], int(a[2]) + 1)
    lines[j] = '%s %d' % (b[0], int(b[2]) - 1)
    doctored = os.path.join(OUT, 'demo', 'doctored.folded')
    with open(doctored, 'w') as f:
        f.write('\n'.join(lines) + '\n')
    rc, out, _ = run([sys.executable, AGREE, SPULSE, demo, '--folded', doctored])
    check('demo.doctored_folded_disagrees', rc == 1,
          'rc %d: %s' % (rc, ' | '.join(out.strip().splitlines()[:3])))
else:
    check('demo.doctored_folded_disagrees', False,
          'flame --folded rc %d, %d lines' % (rc, len(lines)))

with open(RESULT, 'w') as f:
    f.write('%d %d\n' % (npass, nfail))
sys.exit(1 if nfail else 0)
