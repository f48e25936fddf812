#!/usr/bin/env python3
"""Host-side checker of the latency suite: what tests/e2e/guest-latency.sh
left in OUTDIR against the injector's own truth (truth.jsonl of each run).
Every spool/stream is decoded by spool.RawSpool (independent of libspulse)
and also passed to `spulse check`. One line per assertion ("PASS name: ..."
/ "FAIL name: ..."), INFO lines, "PASSED FAILED" into RESULT.

usage: check_latency.py OUTDIR RESULT
"""
import collections
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spool import ElfSyms, Kallsyms, RawSpool, SpoolError, STATE_NAMES, run  # noqa: E402

OUT, RESULT = sys.argv[1:3]
BIN = os.path.join(OUT, 'bin')
SPULSE = os.path.join(BIN, 'spulse')
INJECT = os.path.join(BIN, 'inject')
counts = [0, 0]
BAD_DMESG = re.compile(r'WARNING:|BUG:|sleeping function|Oops|general protection|'
                       r'KASAN|UBSAN|refcount_t|list_(add|del) corruption|'
                       r'rcu.*stall|hung_task|Call Trace')
MS = 1e6
PRESENT_MIN = 0.99	# fraction of injected waits that must be found
TIME_TOL = 0.02		# off-CPU total per stack vs truth
WAKE_TOL_NS = 500000	# wakeup time vs the waker's own clock window
SLACK_NS = 2000000	# search margin around a wait
EDGE_NS = 50000		# clock mapping error allowed at a wait's start (start_us is in us)


def check(name, ok, why=''):
    counts[0 if ok else 1] += 1
    print('%s %s%s' % ('PASS' if ok else 'FAIL', name, (': ' + why) if why else ''),
          flush=True)
    return ok


def info(msg):
    print('INFO %s' % msg, flush=True)


def rd(*p, default=None):
    try:
        with open(os.path.join(OUT, *p), errors='replace') as f:
            return f.read().strip()
    except OSError:
        return default


def rc_of(*p):
    v = rd(*p)
    return int(v) if v is not None and v.lstrip('-').isdigit() else None


def pct(a, b):
    return 100.0 * (a - b) / b if b else float('inf')


def load_truth(path):
    t = dict(waits=collections.defaultdict(list), gaps=collections.defaultdict(list),
             phases={}, threads={}, clock=None, done=None)
    try:
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                ev = r['ev']
                if ev == 'wait':
                    t['waits'][r['scn']].append(r)
                elif ev == 'gap':
                    t['gaps'][r['tid']].append(r)
                elif ev == 'phase':
                    t['phases'][r['scn']] = r
                elif ev == 'thread':
                    t['threads'][r['role']] = r
                elif ev == 'clock':
                    t['clock'] = r
                elif ev == 'done':
                    t['done'] = r
    except (OSError, ValueError) as e:
        return None, str(e)
    if not t['clock'] or not t['done']:
        return None, 'truth file incomplete'
    return t, None


class Resolved:
    """Off-CPU intervals of one or more streams, with tids, user function
    names of both stacks and absolute (CLOCK_REALTIME ns) times."""

    def __init__(self, spools, elf, ksyms):
        self.iv, self.samples, self.triggers = [], [], []
        self.elf, self.ksyms = elf, ksyms
        for sp in spools:
            base = sp.start_us * 1000
            cache = {}
            for o in sp.offcpu:
                th = sp.threads[o['thread']]
                w = dict(o)
                w['tid'] = th['tid']
                w['pid'] = th['pid']
                w['t_out_abs'] = base + o['t_out']
                w['t_wake_abs'] = w['t_out_abs'] + o['blocked_ns']
                w['t_in_abs'] = w['t_wake_abs'] + o['runq_ns']
                w['funcs'] = self.funcs(sp, o['stack'], cache)
                w['kfuncs'] = self.kfuncs(sp, o['stack'])
                if o['waker'] is not None:
                    wt = sp.threads[o['waker']]
                    w['waker_tid'] = wt['tid']
                    w['waker_funcs'] = self.funcs(sp, o['waker_stack'], cache)
                else:
                    w['waker_tid'] = None
                    w['waker_funcs'] = []
                self.iv.append(w)
            for s in sp.samples:
                self.samples.append((sp, s))
            for tr in sp.triggers:
                tr = dict(tr)
                tr['t_abs'] = base + tr['t']
                tr['base'] = base
                self.triggers.append(tr)
        self.by_tid = collections.defaultdict(list)
        for w in self.iv:
            self.by_tid[w['tid']].append(w)
        for lst in self.by_tid.values():
            lst.sort(key=lambda w: w['t_out_abs'])

    def funcs(self, sp, stack, cache):
        if stack in cache:
            return cache[stack]
        names = []
        for fr in sp.frames_of(stack):
            if fr['kind'] == '1':
                names.append(self.elf.name(fr['addr']))
            elif fr['kind'] == '0':
                names.append(self.elf.name(self.elf.rel_to_vaddr(fr['addr'])))
        cache[stack] = [n for n in names if n]
        return cache[stack]

    def kfuncs(self, sp, stack):
        if not self.ksyms:
            return []
        return [self.ksyms.name(fr['addr']) for fr in sp.frames_of(stack) if fr['kind'] == '2']

    def within(self, tid, lo, hi):
        """Intervals of tid switched out in [lo, hi]."""
        return [w for w in self.by_tid.get(tid, ()) if lo <= w['t_out_abs'] <= hi]


def overlap(i, lo, hi):
    """Off-CPU ns of interval i inside [lo, hi]."""
    return max(0, min(i['t_in_abs'], hi) - max(i['t_out_abs'], lo))


def truth_off(w):
    """The injector's own off-CPU time of a wait: wall - thread CPU time."""
    return w['exit_ns'] - w['enter_ns'] - w['cpu_ns']


def wait_checks(run, res, truth, mono2real, scn, need_waker):
    allw = truth['waits'].get(scn, [])
    if not allw:
        return check('%s.%s_truth' % (run, scn), False, 'no %s waits in the truth' % scn)
    # a wait the kernel can see is one during which the thread switched out
    # voluntarily (its own getrusage count); the injector is built so that
    # (nearly) all of them do
    waits = [w for w in allw if w['nvcsw'] >= 1]
    want = int(re.search(r'NWAITS=(\d+)', rd('params', default='NWAITS=40')).group(1))
    check('%s.%s_injected' % (run, scn), len(waits) >= 0.9 * want,
          '%d waits blocked (nvcsw >= 1) of %d measured, %d rounds' %
          (len(waits), len(allw), want))
    if not waits:
        return
    present = waker_ok = wake_t_ok = 0
    tot_truth = tot_meas = 0
    bad = []
    for w in waits:
        lo = w['enter_ns'] + mono2real
        hi = w['exit_ns'] + mono2real
        # the intervals that started inside the wait, whole (not clipped: a
        # kernel interval running past the injector's own return must show)
        ivs = [i for i in res.within(w['tid'], lo - EDGE_NS, hi) if w['func'] in i['funcs']]
        off = truth_off(w)
        tot_truth += off
        meas = sum(i['blocked_ns'] + i['runq_ns'] for i in ivs)
        tot_meas += meas
        slept = [i for i in ivs if i['state'] != 0]
        if slept and meas >= 0.5 * off:
            present += 1
        elif len(bad) < 3:
            bad.append('i=%d truth %.2f ms found %d intervals %.2f ms' %
                       (w['i'], off / MS, len(ivs), meas / MS))
        if slept and need_waker:
            s = max(slept, key=lambda i: i['blocked_ns'] + i['runq_ns'])
            if s['waker_tid'] == w['waker_tid'] and w['waker_func'] in s['waker_funcs']:
                waker_ok += 1
            wl = w['wake_lo_ns'] + mono2real - WAKE_TOL_NS
            wh = w['wake_hi_ns'] + mono2real + WAKE_TOL_NS
            if wl <= s['t_wake_abs'] <= wh:
                wake_t_ok += 1
    n = len(waits)
    check('%s.%s_waits_present' % (run, scn), present >= PRESENT_MIN * n,
          '%d/%d present%s' % (present, n, ('; missing: ' + '; '.join(bad)) if bad else ''))
    check('%s.%s_offcpu_time' % (run, scn),
          tot_truth > 0 and abs(tot_meas - tot_truth) <= TIME_TOL * tot_truth,
          '%s: total %.1f ms vs truth %.1f ms (%+.2f%%)' %
          (waits[0]['func'], tot_meas / MS, tot_truth / MS, pct(tot_meas, tot_truth)))
    if need_waker:
        check('%s.%s_waker' % (run, scn), waker_ok >= PRESENT_MIN * n,
              'waker tid %d with %s in its stack for %d/%d wakeups' %
              (waits[0]['waker_tid'], waits[0]['waker_func'], waker_ok, n))
        check('%s.%s_wake_time' % (run, scn), wake_t_ok >= PRESENT_MIN * n,
              'wakeup inside the waker\'s syscall (+-%.1f ms) for %d/%d' %
              (WAKE_TOL_NS / MS, wake_t_ok, n))


def runq_checks(run, res, truth, mono2real):
    ph = truth['phases']
    if 'runq' not in ph or 'runq_control' not in ph:
        return check('%s.runq_truth' % run, False, 'no runq phase in the truth (1 CPU?)')
    out = {}
    for scn in ('runq', 'runq_control'):
        p = ph[scn]
        lo, hi = p['start_ns'] + mono2real, p['end_ns'] + mono2real
        ivs = [i for i in res.by_tid.get(p['tid'], ()) if overlap(i, lo, hi) > 0]
        off = sum(overlap(i, lo, hi) for i in ivs)
        rq = sum(i['runq_ns'] for i in ivs)
        toff = p['end_ns'] - p['start_ns'] - p['cpu_ns']
        out[scn] = (p, ivs, off, rq, hi - lo, toff)
        info('%s.%s: %d intervals, off-CPU %.1f ms (runq %.1f ms); truth: wall - cpu %.1f ms, '
             'spinner gaps %d = %.1f ms, phase %.1f ms, cpus out %s' %
             (run, scn, len(ivs), off / MS, rq / MS, toff / MS, p['gaps'], p['gap_ns'] / MS,
              (hi - lo) / MS, sorted({i['cpu_out'] for i in ivs})))
    p, ivs, off, rq, span, toff = out['runq']
    check('%s.runq_contended_present' % run, rq >= 0.2 * span and
          any('inj_runq_spin' in i['funcs'] for i in ivs),
          'run-queue delay %.1f ms over a %.1f ms phase sharing CPU %d with a hog (%d intervals)' %
          (rq / MS, span / MS, p['cpu'], len(ivs)))
    check('%s.runq_contended_vs_truth' % run,
          toff > 0 and abs(off - toff) <= 0.05 * toff,
          'off-CPU %.1f ms vs the spinner\'s wall - CPU time %.1f ms (%+.2f%%)' %
          (off / MS, toff / MS, pct(off, toff)))
    cp, civs, coff, crq, cspan, ctoff = out['runq_control']
    check('%s.runq_control_near_zero' % run, crq <= 0.02 * cspan and crq <= 0.1 * max(rq, 1),
          'uncontended CPU %d: run-queue delay %.2f ms over %.1f ms (contended %.1f ms)' %
          (cp['cpu'], crq / MS, cspan / MS, rq / MS))
    stacked = sum(1 for i in ivs if 'inj_runq_spin' in i['funcs'])
    preempt = sum(1 for i in ivs if i['state'] == 0)
    info('%s.runq: %d/%d contended intervals name inj_runq_spin, %d are R (preempted)' %
         (run, stacked, len(ivs), preempt))


def stats_checks(run):
    st, percpu = {}, []
    for line in (rd(run, 'stats', default='') or '').splitlines():
        kv = line.split()
        if len(kv) == 2 and kv[1].lstrip('-').isdigit():
            st[kv[0]] = int(kv[1])
        elif kv and re.match(r'cpu\d+$', kv[0]):
            percpu.append(kv)
    if not st:
        return check('%s.stats' % run, False, 'no stats')
    bad, seen = [], []
    for k in sorted(st):
        m = re.match(r'(\w+)_taken$', k)
        if not m:
            continue
        x = m.group(1)
        w, d = st.get(x + '_written'), st.get(x + '_dropped')
        if w is None or d is None:
            continue
        seen.append('%s %d=%d+%d' % (x, st[k], w, d))
        if st[k] != w + d:
            bad.append(x)
    # per-CPU lines: "cpuN taken T written W dropped D [kind_taken ...]"
    for kv in percpu:
        f = dict(zip(kv[1::2], kv[2::2]))
        for key in f:
            if key.endswith('taken'):
                x = key[:-len('taken')]
                try:
                    t, w, d = (int(f[key]), int(f[x + 'written']), int(f[x + 'dropped']))
                except (KeyError, ValueError):
                    continue
                if t != w + d:
                    bad.append('%s %s' % (kv[0], key))
    off = [s for s in seen if 'offcpu' in s or 'interval' in s]
    info('%s stats: %s' % (run, ' '.join('%s=%d' % kv for kv in sorted(st.items())
                                         if 'offcpu' in kv[0] or 'trigger' in kv[0])))
    check('%s.stats_identity' % run, not bad and bool(off) and 'samples 0' not in seen,
          ('taken = written + dropped: %s' % '; '.join(seen)) +
          ('; broken: %s' % ', '.join(bad) if bad else '') +
          ('' if off else '; no off-CPU taken/written/dropped keys in stats'))


def dmesg_check(run):
    d = rd(run, 'dmesg', default=None)
    if d is None:
        return check('%s.dmesg_clean' % run, False, 'no dmesg')
    hits = [l for l in d.splitlines() if BAD_DMESG.search(l)]
    check('%s.dmesg_clean' % run, not hits, '; '.join(hits[:3]) or 'no kernel reports')


def spulse_check(name, path):
    rc, out, err = run([SPULSE, 'check', path])
    return check(name, rc == 0, ('rc %d: %s' % (rc, (out + err).strip()[-300:])) if rc
                 else os.path.basename(path))


def load(paths):
    sps = []
    for p in paths:
        try:
            sps.append(RawSpool(p))
        except (SpoolError, OSError) as e:
            return None, '%s: %s' % (os.path.basename(p), e)
    return sps, None


def sample_cpu_check(run, sps, raw):
    n = bad = 0
    for i, sp in enumerate(sps):
        want = None
        if raw:
            m = re.search(r'cpu(\d+)$', sp.path)
            want = int(m.group(1)) if m else None
        for s in sp.samples:
            n += 1
            if s[3] is None or (want is not None and s[3] != want):
                bad += 1
    check('%s.samples_carry_cpu' % run, n > 0 and bad == 0,
          '%d samples, %d without the right CPU' % (n, bad))


def common(run, sps, truth, elf, ksyms, raw):
    mono2real = truth['clock']['real_ns'] - truth['clock']['mono_ns']
    res = Resolved(sps, elf, ksyms)
    info('%s: %d off-CPU intervals, %d samples, %d triggers, states %s' %
         (run, len(res.iv), len(res.samples), len(res.triggers),
          dict(collections.Counter(STATE_NAMES[i['state']] for i in res.iv))))
    # clock alignment: the pipe reader's first S interval vs its own clock
    al = []
    for w in truth['waits'].get('pipe', []):
        ivs = [i for i in res.within(w['tid'], w['enter_ns'] + mono2real - SLACK_NS,
                                     w['exit_ns'] + mono2real + SLACK_NS) if i['state']]
        if ivs:
            al.append(ivs[0]['t_out_abs'] - (w['enter_ns'] + mono2real))
    if al:
        al.sort()
        info('%s: switch-out minus the reader\'s clock before read(): median %.1f us '
             '(min %.1f, max %.1f)' % (run, al[len(al) // 2] / 1e3, al[0] / 1e3, al[-1] / 1e3))
    for scn, wk in (('pipe', True), ('mutex', True), ('sleep', False)):
        wait_checks(run, res, truth, mono2real, scn, wk)
    runq_checks(run, res, truth, mono2real)
    sample_cpu_check(run, sps, raw)
    leaf_sched = sum(1 for i in res.iv if i['kfuncs'] and
                     ('schedule' in (i['kfuncs'][0] or '') or
                      '__schedule' in (i['kfuncs'][0] or '')))
    info('%s: %d/%d intervals have a kernel leaf frame naming *schedule*' %
         (run, leaf_sched, len(res.iv)))
    return res


def check_raw(elf, ksyms):
    run_ = 'raw'
    if rc_of('raw', 'insmod.rc') != 0:
        check('raw.insmod', False, 'insmod offcpu=1 rc %s: %s' %
              (rc_of('raw', 'insmod.rc'), rd('raw', 'insmod.err', default='')))
    check('raw.inject_rc', rc_of('raw', 'inject.rc') == 0, 'inject rc %s' % rc_of('raw', 'inject.rc'))
    paths = sorted(p for p in glob.glob(os.path.join(OUT, 'raw', 'cpu*'))
                   if os.path.getsize(p) > 0)
    if not check('raw.streams', bool(paths), '%d non-empty per-CPU streams' % len(paths)):
        return
    for p in paths:
        spulse_check('raw.spulse_check.%s' % os.path.basename(p), p)
    sps, err = load(paths)
    if not check('raw.rawspool_decode', sps is not None, err or 'every stream decodes'):
        return
    first_cpu_ok = all(sp.cpu_records >= 1 for sp in sps)
    check('raw.cpu_record_per_stream', first_cpu_ok,
          'cpu records per stream: %s' % [sp.cpu_records for sp in sps])
    truth, err = load_truth(os.path.join(OUT, 'raw', 'truth.jsonl'))
    if not check('raw.truth', truth is not None, err or ''):
        return
    res = common(run_, sps, truth, elf, ksyms, True)
    man = [t for t in res.triggers if t['reason'] == 1]
    check('raw.manual_trigger', rc_of('raw', 'trigger.rc') == 0 and len(man) == 1 and
          man[0]['seq'] == 0 and man[0]['window_start_ns'] == 0 and man[0]['window_end_ns'] == 0,
          'echo trigger rc %s, %d reason-1 records %s' %
          (rc_of('raw', 'trigger.rc'), len(man), [(t['seq'], t['text']) for t in man]))
    stats_checks('raw')
    dmesg_check('raw')


def check_drain(elf, ksyms):
    p = os.path.join(OUT, 'drain', 'drain.spulse')
    check('drain.drain_rc', rc_of('drain', 'drain.rc') == 0,
          'spulse-drain rc %s: %s' % (rc_of('drain', 'drain.rc'),
                                     (rd('drain', 'drain.log', default='') or '')[-200:]))
    if not check('drain.spool', os.path.exists(p) and os.path.getsize(p) > 0, p):
        return
    spulse_check('drain.spulse_check', p)
    sps, err = load([p])
    if not check('drain.rawspool_decode', sps is not None, err or 'spool decodes'):
        return
    truth, err = load_truth(os.path.join(OUT, 'drain', 'truth.jsonl'))
    if not check('drain.truth', truth is not None, err or ''):
        return
    common('drain', sps, truth, elf, ksyms, False)
    stats_checks('drain')
    dmesg_check('drain')


def check_flight(elf, ksyms):
    if rd('flight', 'skipped'):
        info('flight: NOT RUN: %s' % rd('flight', 'skipped'))
        return check('flight.available', False, rd('flight', 'skipped'))
    rc = rc_of('flight', 'record.rc')
    check('flight.record_rc', rc == 0, 'spulse record --flight rc %s: %s' %
          (rc, (rd('flight', 'record.out', default='') or '')[-300:]))
    paths = sorted(glob.glob(os.path.join(OUT, 'flight', '*.spulse')))
    info('flight: spools %s' % [os.path.basename(p) for p in paths])
    truth, err = load_truth(os.path.join(OUT, 'flight', 'truth.jsonl'))
    if not check('flight.truth', truth is not None, err or ''):
        return
    stall = truth['waits'].get('stall', [None])[0]
    if not check('flight.stall_truth', stall is not None,
                 '' if stall is None else 'stall %.1f ms' % (truth_off(stall) / MS)):
        return
    mono2real = truth['clock']['real_ns'] - truth['clock']['mono_ns']
    secs = float(re.search(r'FLIGHT_S=(\S+)', rd('params', default='FLIGHT_S=2')).group(1))
    found = None
    for p in paths:
        sps, err = load([p])
        if sps is None:
            check('flight.rawspool_decode.%s' % os.path.basename(p), False, err)
            continue
        spulse_check('flight.spulse_check.%s' % os.path.basename(p), p)
        res = Resolved(sps, elf, ksyms)
        trig = [t for t in res.triggers if t['reason'] == 3]
        ivs = [i for i in res.within(stall['tid'], stall['enter_ns'] + mono2real - SLACK_NS,
                                     stall['exit_ns'] + mono2real + SLACK_NS)
               if 'inj_stall_wait' in i['funcs']]
        if trig and ivs:
            found = (p, res, trig[0], ivs)
    if not check('flight.stall_dump', found is not None,
                 'a spool with an offcpu trigger (reason 3) holding the stall interval'):
        return
    p, res, tr, ivs = found
    dur = truth_off(stall)
    meas = sum(overlap(i, stall['enter_ns'] + mono2real, stall['exit_ns'] + mono2real)
               for i in ivs)
    check('flight.stall_interval', abs(meas - dur) <= TIME_TOL * dur and
          ivs[0]['waker_tid'] == stall['waker_tid'],
          'stall %.1f ms vs truth %.1f ms (%+.2f%%), waker tid %s (truth %d), trigger value %.1f ms '
          'threshold %.1f ms "%s"' % (meas / MS, dur / MS, pct(meas, dur), ivs[0]['waker_tid'],
                                      stall['waker_tid'], tr['value_ns'] / MS,
                                      tr['threshold_ns'] / MS, tr['text']))
    check('flight.trigger_fields', tr['threshold_ns'] == 50 * 1000000 and
          tr['value_ns'] >= 50 * 1000000 and tr['seq'] >= 1 and
          tr['window_end_ns'] > tr['window_start_ns'],
          'seq %d value %.1f ms threshold %.1f ms window %.3f..%.3f s' %
          (tr['seq'], tr['value_ns'] / MS, tr['threshold_ns'] / MS,
           tr['window_start_ns'] / 1e9, tr['window_end_ns'] / 1e9))
    # the whole pre-trigger window: every flight pipe wait that started at or
    # after T - SECONDS (+ 50 ms of edge) and ended before T is in the dump
    T = tr['t_abs']
    lo = T - secs * 1e9 + 50 * MS
    pre = [w for w in truth['waits'].get('flight', [])
           if w['enter_ns'] + mono2real >= lo and w['exit_ns'] + mono2real <= T]
    got = 0
    for w in pre:
        if any(w['func'] in i['funcs'] for i in
               res.within(w['tid'], w['enter_ns'] + mono2real - SLACK_NS,
                          w['exit_ns'] + mono2real + SLACK_NS)):
            got += 1
    check('flight.pre_window', pre and got == len(pre) and
          tr['window_start_ns'] + tr['base'] <= lo,
          '%d/%d pipe waits of the %.1f s before the trigger present; window starts %.3f s '
          'before the trigger' % (got, len(pre), secs, (T - tr['base'] - tr['window_start_ns']) / 1e9))
    dmesg_check('flight')


def main():
    if rd('complete') != 'done' and 'LATENCY_RUNS' not in os.environ:
        check('latency.guest_complete', False, 'guest script did not finish (see console.log)')
    test_spool = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'test_spool.py')
    rc, out, _ = run([sys.executable, test_spool, SPULSE])
    n_ok = out.count('\nPASS ') + out.startswith('PASS ')
    check('latency.rawspool_selftest', rc == 0, '%d self-test cases pass%s' %
          (n_ok, '' if rc == 0 else ': ' + '; '.join(l for l in out.splitlines()
                                                    if l.startswith('FAIL'))[:300]))
    if not os.path.exists(INJECT):
        check('latency.inject', False, 'no %s' % INJECT)
    else:
        elf = ElfSyms(INJECT)
        kp = os.path.join(OUT, 'kallsyms')
        ksyms = Kallsyms(kp) if os.path.exists(kp) else None
        info('run seconds: raw %s drain %s flight %s' %
             (rd('raw.secs'), rd('drain.secs'), rd('flight.secs')))
        runs = os.environ.get('LATENCY_RUNS', 'raw drain flight').split()
        for r, fn in (('raw', check_raw), ('drain', check_drain), ('flight', check_flight)):
            if r in runs:
                fn(elf, ksyms)
    os.makedirs(os.path.dirname(RESULT), exist_ok=True)
    with open(RESULT, 'w') as f:
        f.write('%d %d\n' % tuple(counts))
    print('latency: %d passed, %d failed' % tuple(counts))


if __name__ == '__main__':
    main()
