#!/usr/bin/env python3
"""Host-side checker of the e2e suite: reads what tests/e2e/guest-e2e.sh left
in OUTDIR, prints one line per assertion ("PASS name" / "FAIL name: why"),
a few "INFO" report lines, and writes "PASSED FAILED" to RESULT.

usage: check_e2e.py OUTDIR BUILD RESULT
"""
import collections
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spool import ElfSyms, Kallsyms, Spool, is_kernel, is_truncated, run  # noqa: E402
from verdict import BAD_DMESG, Verdict  # noqa: E402

OUT, BUILD, RESULT = sys.argv[1:4]
SPULSE = os.path.join(BUILD, 'spulse')
GT = os.path.join(BUILD, 'workload', 'gt')
V = Verdict(OUT, why_on_pass=False)
check, info, rd, rc_of, counts = V.check, V.info, V.rd, V.rc_of, V.counts

MAIN_PATHS = [
    ['main'] + ['gt_m%02d' % i for i in range(1, 11)] + ['gt_leaf', 'gt_burn'],
    ['main'] + ['gt_m%02d' % i for i in range(1, 11)] + ['gt_leaf', 'gt_read_raw', 'gt_sys_read'],
]
THREAD_PATH = ['gt_thread_start'] + ['gt_t%02d' % i for i in range(1, 11)] + ['gt_burn']
READ_KERNEL = {'vfs_read', 'ksys_read', '__x64_sys_read', 'read_zero', 'read_iter_zero'}


def stats_of(*p):
    st = {}
    for line in (rd(*p, default='') or '').splitlines():
        kv = line.split()
        if len(kv) == 2 and kv[1].lstrip('-').isdigit():
            st[kv[0]] = int(kv[1])
    return st


def check_stats_invariant(name, st):
    keys = ('samples_taken', 'samples_written', 'samples_dropped')
    if not all(k in st for k in keys):
        return check(name, False, 'stats lack %s' % ', '.join(keys))
    t, w, d = (st[k] for k in keys)
    return check(name, t == w + d and t > 0, 'taken %d written %d dropped %d' % (t, w, d))


def spool_check(name, path):
    if not os.path.exists(path):
        return check(name, False, 'no spool %s' % path)
    rc, out, err = run([SPULSE, 'check', path])
    return check(name, rc == 0, 'spulse check rc %d: %s' % (rc, (out + err).strip()[-300:]))


def load_spool(path):
    try:
        return Spool(SPULSE, path)
    except (RuntimeError, OSError, KeyError, ValueError) as e:
        info('cannot load %s: %s' % (path, e))
        return None


def symbolize(sp, fr, elf, ksyms):
    """(is_kernel, name or None) of one frame record."""
    if is_kernel(fr):
        return True, ksyms.name(fr['addr']) if ksyms else None
    if is_truncated(fr):
        return False, '[truncated]'
    if 'module' in fr:
        m = sp.modules.get(fr['module'])
        if m is None or not m['path'].endswith('/gt'):
            return False, None
        return False, elf.name(elf.rel_to_vaddr(fr['addr']))
    return False, elf.name(fr['addr'])  # absolute user: static non-PIE


def is_whole_chain(user):
    """user: names, innermost first. True when, from the thread's entry
    (main / gt_thread_start) inward, the frames are a prefix of a known
    path that ends at the sampled function."""
    outer = list(reversed(user))
    for entry, paths in (('main', MAIN_PATHS), ('gt_thread_start', [THREAD_PATH])):
        if entry in outer:
            seq = outer[outer.index(entry):]
            return any(seq == p[:len(seq)] for p in paths)
    return False


def scenario_gt():
    gtpid = rc_of('gt', 'gt.pid')
    check('gt: insmod target_pid=PID freq=999 succeeds', rc_of('gt', 'insmod.rc') == 0,
          'rc %s' % rd('gt', 'insmod.rc'))
    check('gt: control start/stop accepted',
          rc_of('gt', 'start.rc') == 0 and rc_of('gt', 'stop.rc') == 0
          and rd('gt', 'state.running') == 'running',
          'start %s stop %s state %s' % (rd('gt', 'start.rc'), rd('gt', 'stop.rc'),
                                         rd('gt', 'state.running')))
    check('gt: spulse-drain exits 0', rc_of('gt', 'drain.rc') == 0,
          'rc %s: %s' % (rd('gt', 'drain.rc'), (rd('gt', 'drain.log') or '')[-300:]))
    st = stats_of('gt', 'stats')
    check_stats_invariant('gt: stats taken == written + dropped', st)
    spath = os.path.join(OUT, 'gt', 'gt.spulse')
    spool_check('gt: spool passes spulse check', spath)
    check('gt: rmmod after recording succeeds', rc_of('gt', 'rmmod.rc') == 0,
          'rc %s' % rd('gt', 'rmmod.rc'))
    sp = load_spool(spath) if os.path.exists(spath) else None
    if sp is None:
        for n in ('gt: samples recorded', 'gt: only the target process is sampled',
                  'gt: module records cover the workload text',
                  'gt: >= 95% of workload samples carry the whole user chain',
                  'gt: read(2) samples carry kernel read frames above the whole user chain'):
            check(n, False, 'no readable spool')
        return
    elf = ElfSyms(GT)
    kpath = spath + '.kallsyms'
    if not os.path.exists(kpath):
        info('no %s; using the guest /proc/kallsyms copy' % kpath)
        kpath = os.path.join(OUT, 'gt', 'kallsyms')
    ksyms = Kallsyms(kpath) if os.path.exists(kpath) else None

    samples = [(sp.threads[t], s) for t, s in sp.samples]
    mine = [(t, s) for t, s in samples if t['pid'] == gtpid]
    other = collections.Counter((t['pid'], t['comm']) for t, s in samples if t['pid'] != gtpid)
    info('gt: %d samples in spool, %d of pid %s, %d threads' %
         (len(samples), len(mine), gtpid, len({t['tid'] for t, s in mine})))
    check('gt: samples recorded (>= 500 of the workload)', len(mine) >= 500,
          'only %d' % len(mine))
    check('gt: only the target process is sampled (distractor running)', not other,
          'other processes: %s' % dict(other.most_common(5)))
    check('gt: both workload threads sampled', len({t['tid'] for t, s in mine}) >= 2,
          'tids %s' % sorted({t['tid'] for t, s in mine}))
    if 'samples_written' in st:
        info('gt: stats samples_written %d, dropped %d, spool samples %d' %
             (st['samples_written'], st.get('samples_dropped', -1), len(samples)))

    lo, hi = elf.text_range()
    cover = [m for m in sp.modules.values()
             if m['pid'] == gtpid and m['path'].endswith('/gt')
             and m['start'] <= lo and m['end'] >= (hi & ~0xfff)]
    check('gt: module records cover the workload text [%#x, %#x)' % (lo, hi), bool(cover),
          'modules of pid: %s' % [(hex(m['start']), hex(m['end']), m['path'])
                                  for m in sp.modules.values() if m['pid'] == gtpid])

    whole = considered = 0
    bad = collections.Counter()
    libc = collections.Counter()
    kread = kread_whole = kread_order = 0
    for t, s in mine:
        frames = sp.frames_of(s)
        sym = [symbolize(sp, fr, elf, ksyms) for fr in frames]
        user = [n or '?' for k, n in sym if not k]
        kern = [n or '?' for k, n in sym if k]
        if not user:
            bad['(no user frames)'] += 1
            continue
        inner = user[0]
        if not (inner.startswith('gt_') or inner == 'main'):
            # IP outside the workload's own code: glibc read(), vDSO, pthread.
            libc[' <- '.join(user[:4]) + (' | kernel ' + kern[-1] if kern else '')] += 1
            continue
        considered += 1
        ok = is_whole_chain(user)
        whole += ok
        if not ok:
            bad[' <- '.join(user[:14])] += 1
        if kern and inner == 'gt_sys_read':
            kread += 1
            first_user = next(i for i, (k, n) in enumerate(sym) if not k)
            in_order = all(not k for k, n in sym[first_user:])
            kread_order += in_order
            if ok and in_order and READ_KERNEL & set(kern):
                kread_whole += 1
    frac = whole / considered if considered else 0.0
    check('gt: >= 95%% of workload samples carry the whole user chain (%d/%d = %.1f%%)' %
          (whole, considered, 100 * frac), considered > 0 and frac >= 0.95,
          'top broken: %s' % bad.most_common(3))
    for k, v in bad.most_common(3):
        info('gt: broken chain x%d: %s' % (v, k))
    check('gt: read(2) samples carry kernel read frames above the whole user chain '
          '(%d of %d kernel samples in gt_sys_read)' % (kread_whole, kread),
          kread_whole >= 10 and kread_order == kread,
          'kernel-above-user order held in %d of %d' % (kread_order, kread))
    info('gt: glibc read()/other-IP branch (reported, not asserted): %d samples' %
         sum(libc.values()))
    for k, v in libc.most_common(4):
        info('gt:   x%d user %s' % (v, k))


def scenario_badparam():
    for n in ('target_pid', 'freq', 'event'):
        rc = rc_of('badparam', n + '.rc')
        lines = [l for l in (rd('badparam', n + '.dmesg', default='') or '').splitlines()
                 if 'spulse' in l and 'taint' not in l and 'out-of-tree' not in l]
        check('badparam: %s refused (insmod fails, not loaded, one dmesg line)' % n,
              rc not in (None, 0) and rd('badparam', n + '.state') == 'absent'
              and len(lines) == 1,
              'rc %s state %s dmesg %s' % (rc, rd('badparam', n + '.state'), lines))
    check('badparam: a good load still works afterwards', rc_of('badparam', 'good.rc') == 0,
          'rc %s' % rd('badparam', 'good.rc'))


def scenario_control():
    g = lambda n: rd('control', n)  # noqa: E731
    check('control: module loads', rc_of('control', 'insmod.rc') == 0, 'rc %s' % g('insmod.rc'))
    check('control: garbage refused while stopped, state unchanged',
          rc_of('control', 'bogus_stopped.rc') not in (None, 0)
          and g('state0') == g('state1') == 'stopped',
          'rc %s states %s -> %s' % (g('bogus_stopped.rc'), g('state0'), g('state1')))
    check('control: garbage refused while running, state unchanged',
          rc_of('control', 'bogus_running.rc') not in (None, 0)
          and g('state2') == g('state3') == 'running' and g('state4') == 'stopped',
          'rc %s states %s -> %s -> %s' % (g('bogus_running.rc'), g('state2'),
                                          g('state3'), g('state4')))


def scenario_tiny():
    check('tiny: loads with a tiny buffer (%s)' % rd('tiny', 'params'),
          rc_of('tiny', 'insmod.rc') == 0,
          'rc %s' % rd('tiny', 'insmod.rc'))
    st = stats_of('tiny', 'stats')
    check('tiny: samples dropped and counted without a drainer',
          st.get('samples_dropped', 0) > 0 and st.get('dropped_buffer_full', 0) > 0,
          'stats %s' % {k: v for k, v in st.items() if 'drop' in k or 'taken' in k})
    check_stats_invariant('tiny: stats taken == written + dropped', st)
    path = os.path.join(OUT, 'tiny', 'tiny.spulse')
    if spool_check('tiny: spool drained afterwards passes spulse check', path):
        sp = load_spool(path)
        check('tiny: drained spool holds samples', sp is not None and len(sp.samples) > 0,
              'no samples')


def scenario_rmmod():
    check('rmmod: rmmod while recording with the drainer attached succeeds',
          rc_of('rmmod', 'rmmod.rc') == 0 and rd('rmmod', 'state') == 'absent',
          'rc %s state %s' % (rd('rmmod', 'rmmod.rc'), rd('rmmod', 'state')))
    check('rmmod: drainer stops (no hang)', rd('rmmod', 'drain.state') == 'exited',
          'drainer %s rc %s' % (rd('rmmod', 'drain.state'), rd('rmmod', 'drain.rc')))
    spool_check('rmmod: spool of the interrupted recording passes spulse check',
                os.path.join(OUT, 'rmmod', 'rmmod.spulse'))


def main():
    complete = rd('complete') == 'done'
    check('vm: guest ran every scenario', complete,
          'guest exit %s; see %s/console.log' % (rd('exit-code'), OUT))
    if rd('missing'):
        info(rd('missing'))
    scenario_gt()
    scenario_badparam()
    scenario_control()
    scenario_tiny()
    scenario_rmmod()
    acc = (rd('dmesg.acc', default='') or '') + '\n' + (rd('dmesg.txt', default='') or '')
    bad = [l for l in acc.splitlines() if BAD_DMESG.search(l)]
    check('dmesg: no WARN/BUG/"sleeping function" lines', complete and not bad,
          '%d lines, first: %s' % (len(bad), bad[:3]))
    os.makedirs(os.path.dirname(RESULT), exist_ok=True)
    with open(RESULT, 'w') as f:
        f.write('%d %d\n' % tuple(counts))
    print('e2e: %d passed, %d failed' % tuple(counts))


main()
