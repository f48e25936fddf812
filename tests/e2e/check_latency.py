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
from verdict import BAD_DMESG, Verdict  # noqa: E402
import latency_cpu0  # noqa: E402

OUT, RESULT = sys.argv[1:3]
BIN = os.path.join(OUT, 'bin')
SPULSE = os.path.join(BIN, 'spulse')
INJECT = os.path.join(BIN, 'inject')
V = Verdict(OUT, why_on_pass=True)
check, info, rd, rc_of, counts = V.check, V.info, V.rd, V.rc_of, V.counts
MS = 1e6
PRESENT_MIN = 0.99	# fraction of injected waits that must be found
TIME_TOL = 0.02		# off-CPU total per stack vs truth
WAKE_TOL_NS = 500000	# wakeup time vs the waker's own clock window
SLACK_NS = 2000000	# search margin around a wait
EDGE_NS = 200000	# an interval may start this much before a wait's aligned start
CLOCK_TOL_NS = 1000000	# spool time vs the injector's clock, after the mapping
CLEAN_CPU_NS = 1000000	# see exact_truth()
CLEAN_MIN_N = 8		# waits with an exact truth needed for the time check
RUNQ_TOL = 0.10		# contended spinner: kernel vs wall - CPU time (steal)


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


def exact_truth(w):
    """A wait's wall - CPU time is its exact off-CPU time when it spent under
    CLEAN_CPU_NS on CPU, and, with a waker, when the waker saw it asleep
    within CLEAN_CPU_NS of the wait's start (its own 'seen' time, a
    CLOCK_MONOTONIC bound). Under TCG on a loaded host a stolen vCPU makes
    the CPU time wrong: the guest's sched_clock (TSC marked unstable) is
    clamped to a tick past the last tick and drops stolen time, so a thread
    that was running looks off CPU to the injector."""
    if w['cpu_ns'] > CLEAN_CPU_NS:
        return False
    if w['waker_tid']:
        lower = w['wake_lo_ns'] - w['seen_ns'] if w.get('seen_ns') else 0
        return w.get('seen_ns', 0) > 0 and truth_off(w) - lower <= CLEAN_CPU_NS
    return True


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
    meas_of = []
    bad = []
    # consecutive waits of a thread are back to back: a wait owns the
    # intervals that switched out from EDGE_NS before its start until EDGE_NS
    # before the next wait's start (at most its end)
    nxt = {}
    order = sorted(allw, key=lambda w: (w['tid'], w['enter_ns']))
    for a, b in zip(order, order[1:]):
        if a['tid'] == b['tid']:
            nxt[id(a)] = b['enter_ns']
    for w in waits:
        lo = w['enter_ns'] + mono2real
        hi = min(w['exit_ns'], nxt.get(id(w), w['exit_ns']) - EDGE_NS) + mono2real
        # the intervals that started inside the wait, whole (not clipped: a
        # kernel interval running past the injector's own return must show)
        ivs = [i for i in res.within(w['tid'], lo - EDGE_NS, hi) if w['func'] in i['funcs']]
        off = truth_off(w)
        tot_truth += off
        meas = sum(i['blocked_ns'] + i['runq_ns'] for i in ivs)
        meas_of.append(meas)
        tot_meas += meas
        # present: a sleep interval that lasted at least until the waker
        # started its waking syscall (nanosleep: 90% of the requested time);
        # mono-clock times only, so host steal cannot fake or hide one
        slept = [i for i in ivs if i['state'] != 0]
        if w['waker_tid']:	# off CPU across the moment the waker woke it
            t0 = w['wake_lo_ns'] + mono2real
            span = [i for i in slept if i['t_out_abs'] <= t0 and i['t_in_abs'] >= t0 - WAKE_TOL_NS]
        else:			# off CPU for the requested sleep
            span = [i for i in slept if i['blocked_ns'] + i['runq_ns'] >= 0.9 * w['req_ns']]
        if span:
            present += 1
        elif len(bad) < 3:
            bad.append('i=%d truth %.2f ms found %d intervals %.2f ms' %
                       (w['i'], off / MS, len(ivs), meas / MS))
        if span and need_waker:
            s = span[0]
            if s['waker_tid'] == w['waker_tid'] and w['waker_func'] in s['waker_funcs']:
                waker_ok += 1
            wl = w['wake_lo_ns'] + mono2real - WAKE_TOL_NS
            wh = w['wake_hi_ns'] + mono2real + WAKE_TOL_NS
            if wl <= s['t_wake_abs'] <= wh:
                wake_t_ok += 1
    n = len(waits)
    check('%s.%s_waits_present' % (run, scn), present >= PRESENT_MIN * n,
          '%d/%d present%s' % (present, n, ('; missing: ' + '; '.join(bad)) if bad else ''))
    # The time totals over the waits whose truth is exact (exact_truth()).
    clean = [k for k, w in enumerate(waits) if exact_truth(w)]
    ct = sum(truth_off(waits[k]) for k in clean)
    cm = sum(meas_of[k] for k in clean)
    check('%s.%s_offcpu_time' % (run, scn),
          len(clean) >= CLEAN_MIN_N and ct > 0 and abs(cm - ct) <= TIME_TOL * ct,
          '%s: total %.1f ms vs truth %.1f ms (%+.2f%%) over %d/%d waits with exact truth; '
          'all %d: %.1f ms vs %.1f ms (%+.2f%%)' %
          (waits[0]['func'], cm / MS, ct / MS, pct(cm, ct), len(clean), n, n,
           tot_meas / MS, tot_truth / MS, pct(tot_meas, tot_truth)))
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
          toff > 0 and abs(off - toff) <= RUNQ_TOL * toff,
          'off-CPU %.1f ms vs the spinner\'s wall - CPU time %.1f ms (%+.2f%%)' %
          (off / MS, toff / MS, pct(off, toff)))
    cp, civs, coff, crq, cspan, ctoff = out['runq_control']
    # near zero: under 2% of the phase with nothing else running (raw run);
    # with the drainer writing the spool over 9p (its kworkers run anywhere)
    # under 10% of the contended delay
    lim = 0.02 * cspan if run == 'raw' else 0.1 * rq
    check('%s.runq_control_near_zero' % run, crq <= lim and crq <= 0.1 * max(rq, 1),
          'uncontended CPU %d: run-queue delay %.2f ms over %.1f ms (limit %.1f ms; contended %.1f ms)' %
          (cp['cpu'], crq / MS, cspan / MS, lim / MS, rq / MS))
    # wall - CPU time is an upper bound of the off-CPU time under steal
    check('%s.runq_control_vs_truth' % run, coff <= ctoff + 2 * MS,
          'uncontended off-CPU %.2f ms <= the spinner\'s wall - CPU time %.2f ms (+2 ms)' %
          (coff / MS, ctoff / MS))
    # LATENCY_TRACE=1: who ran on CPU 0 while the control waited
    if os.path.exists(os.path.join(OUT, run, 'sched-cpu0.trace')):
        for ln in latency_cpu0.analyse(OUT, run):
            info('%s.runq_control_cpu0: %s' % (run, ln[len(run) + 2:]))
    stacked = sum(1 for i in ivs if 'inj_runq_spin' in i['funcs'])
    preempt = sum(1 for i in ivs if i['state'] == 0)
    info('%s.runq: %d/%d contended intervals name inj_runq_spin, %d are R (preempted)' %
         (run, stacked, len(ivs), preempt))


def stats_checks(run, sps=None):
    """The accounting identities of the stats file, one per kind (key names
    from kmod/control.c): every sample taken is written or dropped; every
    switch-out taken is written, filtered (shorter than offcpu_min_us),
    dropped (offcpu_dropped_*), lost (replaced while open) or still open at
    stop; every wakeup taken is attached, early, runnable, repeat, unslotted
    or dropped (wakeups_dropped_*). With the raw streams (sps), the written
    counts must equal the records found in them."""
    st, percpu = {}, []
    for line in (rd(run, 'stats', default='') or '').splitlines():
        kv = line.split()
        if len(kv) == 2 and kv[1].lstrip('-').isdigit():
            st[kv[0]] = int(kv[1])
        elif kv and re.match(r'cpu\d+$', kv[0]):
            percpu.append(kv)
    if not st:
        return check('%s.stats' % run, False, 'no stats')
    info('%s stats: %s' % (run, ' '.join('%s=%d' % kv for kv in sorted(st.items())
                                         if re.match('offcpu|wakeups|early|trigger', kv[0]))))

    def ident(name, total, parts):
        if total not in st or not all(p in st for p in parts):
            return check('%s.stats_%s' % (run, name), False, 'stats lack %s' %
                         ', '.join(k for k in [total] + parts if k not in st))
        s = sum(st[p] for p in parts)
        check('%s.stats_%s' % (run, name), st[total] == s and st[total] > 0,
              '%s %d = %s = %d' % (total, st[total], ' + '.join('%s %d' % (p, st[p])
                                                                for p in parts), s))
    ident('samples', 'samples_taken', ['samples_written', 'samples_dropped'])
    ident('offcpu', 'offcpu_taken', ['offcpu_written', 'offcpu_filtered', 'offcpu_lost',
                                     'offcpu_open_at_stop'] +
          sorted(k for k in st if k.startswith('offcpu_dropped_')))
    ident('wakeups', 'wakeups_taken', sorted(
        k for k in st if k.startswith('wakeups_') and k != 'wakeups_taken'))
    bad = []
    for kv in percpu:	# "cpuN taken T written W dropped D"
        f = dict(zip(kv[1::2], kv[2::2]))
        try:
            if int(f['taken']) != int(f['written']) + int(f['dropped']):
                bad.append(' '.join(kv))
        except (KeyError, ValueError):
            bad.append(' '.join(kv))
    check('%s.stats_per_cpu' % run, percpu and not bad,
          '%d cpu lines%s' % (len(percpu), '; broken: ' + '; '.join(bad) if bad else ''))
    if sps is not None:
        got = (sum(len(sp.samples) for sp in sps), sum(len(sp.offcpu) for sp in sps),
               sum(len(sp.triggers) for sp in sps))
        want = (st.get('samples_written'), st.get('offcpu_written'), st.get('triggers_written'))
        check('%s.stats_match_streams' % run, got == want,
              'records in the streams (samples, intervals, triggers) %s, stats written %s' %
              (got, want))


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
    # Clock alignment. The spool's absolute time is start_us (realtime at the
    # session start) + a monotonic offset; the truth maps CLOCK_MONOTONIC to
    # realtime with the offset the injector measured. The two agree when the
    # kernel paired start_us with its monotonic origin exactly; the residual
    # is the median, over the pipe waits, of switch-out minus the reader's
    # clock read just before read(2) (a few tens of us of syscall entry).
    # The per-wait checks use the aligned clock; the residual itself is a
    # check of its own.
    al = []
    for w in truth['waits'].get('pipe', []):
        ivs = [i for i in res.within(w['tid'], w['enter_ns'] + mono2real - SLACK_NS,
                                     w['exit_ns'] + mono2real) if i['state'] and
               w['func'] in i['funcs']]
        if ivs:
            al.append(ivs[0]['t_out_abs'] - (w['enter_ns'] + mono2real))
    med = 0
    if al:
        al.sort()
        med = al[len(al) // 2]
    check('%s.clock_origin' % run, bool(al) and abs(med) <= CLOCK_TOL_NS,
          'switch-out minus the reader\'s own clock before read(): median %.1f us over %d waits '
          '(min %.1f, max %.1f; tolerance %.1f ms)' %
          (med / 1e3, len(al), al[0] / 1e3 if al else 0, al[-1] / 1e3 if al else 0,
           CLOCK_TOL_NS / MS))
    mono2real += med
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
    stats_checks('raw', sps)
    dmesg_check('raw')


def cli_latency_check(path, sp):
    """`spulse latency --json` (the CLI over libspulse) agrees with the
    independent reader: interval count, blocked and run-queue totals, and
    the count of each state's histogram."""
    rc, out, err = run([SPULSE, 'latency', path, '--json', '--top', '0'])
    try:
        j = json.loads(out) if rc == 0 else None
    except ValueError:
        j = None
    if j is None:
        return check('drain.cli_latency_totals', False, 'spulse latency --json rc %d: %s' %
                     (rc, (err or out).strip()[-200:]))
    mine = (len(sp.offcpu), sum(o['blocked_ns'] for o in sp.offcpu),
            sum(o['runq_ns'] for o in sp.offcpu))
    cli = (j.get('intervals'), j.get('blocked_ns'), j.get('runq_ns'))
    st_mine = dict(collections.Counter(STATE_NAMES[o['state']] for o in sp.offcpu))
    st_cli = {h['state']: h['count'] for h in j.get('histograms', [])
              if h.get('metric') == 'offcpu' and h.get('state')}
    check('drain.cli_latency_totals', mine == cli and st_mine == st_cli,
          '(intervals, blocked ns, runq ns) spulse latency %s, RawSpool %s; per state %s vs %s' %
          (cli, mine, st_cli, st_mine))


def cli_report_check(path, sps, elf, ksyms):
    """`spulse report --off-cpu --json` (elfutils symbolization) gives each
    injector function the same inclusive off-CPU time as RawSpool + nm."""
    rc, out, err = run([SPULSE, 'report', path, '--off-cpu', '--json', '--top', '100000'])
    try:
        rows = {r['function']: r['total'] for r in json.loads(out)['rows']} if rc == 0 else None
    except (ValueError, KeyError, TypeError):
        rows = None
    if rows is None:
        return check('drain.cli_report_offcpu', False, 'spulse report --off-cpu --json rc %d: %s'
                     % (rc, (err or out).strip()[-200:]))
    res = Resolved(sps, elf, ksyms)
    bad, shown = [], []
    for fn in ('inj_pipe_wait', 'inj_pipe_delay', 'inj_mutex_wait', 'inj_mutex_gate_wait',
               'inj_sleep_wait', 'inj_runq_spin', 'inj_runq_ctl_spin'):
        mine = sum(i['blocked_ns'] + i['runq_ns'] for i in res.iv if fn in i['funcs'])
        cli = rows.get(fn, 0)
        shown.append('%s %.1f/%.1f ms' % (fn, cli / MS, mine / MS))
        if cli != mine or not mine:
            bad.append(fn)
    check('drain.cli_report_offcpu', not bad,
          'inclusive off-CPU (report/RawSpool): %s%s' %
          (', '.join(shown), '; differ: ' + ', '.join(bad) if bad else ''))


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
    cli_latency_check(p, sps[0])
    cli_report_check(p, sps, elf, ksyms)
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


def check_perf(elf, ksyms):
    """Off-CPU time per thread of Debian's python3, spulse vs `perf sched
    timehist` recorded in the same run (perf with -k CLOCK_MONOTONIC, the
    clock spulse uses). Only the Python worker threads are compared: they
    are created after the recording started, so both tools see their whole
    life. Matching the two: a timehist line is printed at each switch-out
    and carries the off-CPU interval that ended at the preceding switch-in
    (its "wait time" = switch-in - previous switch-out, which includes the
    "sch delay" = switch-in - wakeup); the first line of a new thread has
    no interval (wait 0, its delay is from wake_up_new_task), and timehist
    usually prints no line for the exiting thread's last switch-out, and
    then spulse's last interval of the thread has no timehist line."""
    if rd('perf', 'skipped'):
        return check('perf.available', False, rd('perf', 'skipped'))
    check('perf.record_rc', rc_of('perf', 'record.rc') == 0,
          (rd('perf', 'record.out', default='') or '')[-200:])
    check('perf.timehist_rc', rc_of('perf', 'timehist.rc') == 0,
          (rd('perf', 'timehist.err', default='') or '')[-200:])
    p = os.path.join(OUT, 'perf', 'py.spulse')
    if not check('perf.spool', os.path.exists(p) and os.path.getsize(p) > 0, p):
        return
    spulse_check('perf.spulse_check', p)
    sps, err = load([p])
    if not check('perf.rawspool_decode', sps is not None, err or 'spool decodes'):
        return
    sp = sps[0]
    # spulse: per worker tid, (blocked, runq) in switch-in order. Python
    # 3.11 does not name OS threads: the workers are the python3 process's
    # threads other than its main thread.
    mine = collections.defaultdict(list)
    for iv in sp.offcpu:
        th = sp.threads[iv['thread']]
        if th['comm'] == 'python3' and th['tid'] != th['pid']:
            t_in = iv['t_out'] + iv['blocked_ns'] + iv['runq_ns']
            mine[th['tid']].append((t_in, iv['blocked_ns'], iv['runq_ns'], iv['state']))
    theirs = collections.defaultdict(list)
    for line in (rd('perf', 'timehist.txt', default='') or '').splitlines():
        f = line.split()
        if len(f) < 6 or not re.match(r'^\d+\.\d+$', f[0]):
            continue
        m = re.search(r'\[(\d+)(?:/(\d+))?\]$', f[2])
        if not m:
            continue
        try:
            w, d = float(f[3]) * 1e6, float(f[4]) * 1e6
        except ValueError:
            continue
        theirs[int(m.group(1))].append((w, d))
    workers = sorted(mine)
    check('perf.worker_threads', len(workers) == 4,
          'python3 worker threads with intervals: %s' % ' '.join(map(str, workers)))
    for t in workers:
        b = theirs.get(t, [])[1:]	# the first line has no interval
        a = sorted(mine[t])
        # timehist usually prints no line for the exiting thread's last
        # switch-out, and then spulse's last interval has no line
        if len(b) == len(a) - 1:
            a = a[:-1]
        if not check('perf.thread_%d_lines' % t, len(b) > 0,
                     '%d timehist lines for tid %d' % (len(b), t)):
            continue
        ta = sum(x[1] + x[2] for x in a)
        tb = sum(x[0] for x in b)
        qa = sum(x[2] for x in a)
        qw = sum(x[2] for x in a if x[3] != 0)
        qb = sum(x[1] for x in b)
        check('perf.thread_%d_offcpu' % t,
              tb > 0 and abs(ta - tb) <= TIME_TOL * tb and len(a) == len(b),
              'spulse %.2f ms in %d intervals vs perf sched timehist wait %.2f ms in %d: %+.2f%%' %
              (ta / MS, len(a), tb / MS, len(b), pct(ta, tb)))
        # timehist's sch delay counts woken intervals only (a preempted
        # thread's wait is its "preempt" time): compare spulse's non-R runq
        info('perf.thread_%d_runq: run-queue delay of woken intervals spulse %.3f ms vs perf '
             'sch delay %.3f ms (%+.1f%%); with preemptions (R) %.3f ms; printed, not asserted' %
             (t, qw / MS, qb / MS, pct(qw, qb), qa / MS))
    dmesg_check('perf')

STOP_WQ = re.compile(r'\s(\d+\.\d+): (workqueue_queue_work|workqueue_execute_start):.*?'
                     r'function[= ](spulse_meta_\w+)')
STOP_MARK = re.compile(r'\s(\d+\.\d+): tracing_mark_write: spulse-test (\w+)')


def check_stop(elf, ksyms):
    """The stop path (issue 19 item 5, guest-latency.sh run_stop): a stop
    written from a chroot resolves the last scan's paths against the
    worker's root, and no meta work is queued or runs after a stop."""
    if rd('stop', 'skipped'):
        return info('stop: skipped: %s' % rd('stop', 'skipped'))
    pid = rd('stop', 'pid') or '?'
    check('stop.insmod', rc_of('stop', 'insmod.rc') == 0 and rc_of('stop', 'insmod2.rc') == 0,
          'rc %s, %s: %s' % (rd('stop', 'insmod.rc'), rd('stop', 'insmod2.rc'),
                             rd('stop', 'insmod.err', default='')[:200]))
    check('stop.stop_from_chroot_rc', rc_of('stop', 'stop.rc') == 0,
          '`echo stop > control` from chroot /host: rc %s' % rd('stop', 'stop.rc'))
    meta = os.path.join(OUT, 'stop', 'meta')
    rc, out, err = run([SPULSE, 'dump', meta])
    mods = re.findall(r'^module id=\d+ pid=%s .*? path=(\S+)' % re.escape(pid), out, re.M)
    # the target runs in the guest's root and maps the file through the
    # host root's bind of OUT at /host<OUT>; the stopper is chrooted at /host
    want = '/host' + os.path.abspath(OUT) + '/stop/stopmap.bin'
    got = [p for p in mods if p.endswith('/stopmap.bin')]
    check('stop.chroot_stop_paths_as_the_target_sees_them',
          rc == 0 and got and all(p == want for p in got),
          'rc %d; the mapping made just before a stop from chroot /host: %s (want %s)' %
          (rc, got or 'not announced', want))
    check('stop.chroot_stop_keeps_the_live_target',
          rc == 0 and not re.search(r'^process-deactivate pid=%s$' % re.escape(pid), out, re.M),
          'no process-deactivate for pid %s (alive at the stop) in the meta stream' % pid)
    tr = rd('stop', 'sched.trace', default='')
    cycles = int(rd('stop', 'cycles', default='0') or 0)
    state, bad, during, marks, mapped = 'before', [], 0, collections.Counter(), 0
    for line in tr.splitlines():
        m = STOP_MARK.search(line)
        if m:
            state = m.group(2)
            marks[state] += 1
            continue
        m = STOP_WQ.search(line)
        if not m:
            continue
        if state == 'mapped':
            mapped += 1
        if state in ('stopped', 'end'):
            bad.append('%s %s %s' % (m.group(1), m.group(2), m.group(3)))
        elif state == 'start':
            during += 1
    info('stop: meta work between the mapping and the stop: %d events (0: the stop\'s own '
         'last scan announced it)' % mapped)
    check('stop.meta_work_never_after_stop',
          cycles >= 30 and marks['stopped'] == cycles + 1 and during > 0 and not bad,
          '%d stops (%d traced), meta work queued/run %d times while recording, %d times after '
          'a stop returned%s' % (cycles + 1, marks['stopped'], during, len(bad),
                                 (': ' + '; '.join(bad[:4])) if bad else ''))
    check('stop.rmmod', (rd('stop', 'rmmod.rc') or '').split() == ['0', '0'],
          'rmmod rc %s' % ' '.join((rd('stop', 'rmmod.rc') or '?').split()))
    dmesg_check('stop')


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
        runs = os.environ.get('LATENCY_RUNS', 'raw drain flight perf stop').split()
        for r, fn in (('raw', check_raw), ('drain', check_drain), ('flight', check_flight),
                      ('perf', check_perf), ('stop', check_stop)):
            if r in runs:
                hung = rd(r, 'hung')
                check('%s.no_hang' % r, not hung,
                      ('; '.join(hung.splitlines())[:1500]) if hung else
                      'the run ended within the guest\'s per-run limit')
                fn(elf, ksyms)
    os.makedirs(os.path.dirname(RESULT), exist_ok=True)
    with open(RESULT, 'w') as f:
        f.write('%d %d\n' % tuple(counts))
    print('latency: %d passed, %d failed' % tuple(counts))


if __name__ == '__main__':
    main()
