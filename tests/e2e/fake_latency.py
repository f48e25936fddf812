#!/usr/bin/env python3
"""Self-test of check_latency.py: from a real injector truth file, write the
per-CPU streams a perfect spulse.ko would have written (hand-encoded here,
per docs/FORMAT.md 3.10), then run the checker on them -- once as is (every
check must pass) and once per planted fault (each must be caught).

usage: fake_latency.py INJECT SPULSE WORKDIR
  INJECT: the injector binary (run here on the host for the truth)
"""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from spool import ElfSyms, MAGIC  # noqa: E402
from test_spool import ext, offcpu, sv, trigger, uv  # noqa: E402


class Stream:
    def __init__(self, start_us, cpu):
        self.b = bytearray(MAGIC + uv(start_us) + uv(0)) + ext(1, uv(cpu))
        self.frames, self.stacks, self.threads = {}, {}, {}
        self.ev = 0
        self.st = 0

    def frame(self, kind, addr):
        k = (kind, addr)
        if k not in self.frames:
            self.frames[k] = len(self.frames)
            self.b += b'\x02' + uv(self.frames[k]) + bytes([kind]) + uv(addr)
        return self.frames[k]

    def stack(self, user, kern):
        par = None
        for kind, a in [(1, x) for x in user] + [(2, x) for x in kern]:
            f = self.frame(kind, a)
            k = (par, f)
            if k not in self.stacks:
                self.stacks[k] = len(self.stacks)
                self.b += b'\x03' + uv(self.stacks[k]) + uv(0 if par is None else par + 1) + uv(f)
            par = self.stacks[k]
        return par

    def thread(self, pid, tid):
        if tid not in self.threads:
            self.threads[tid] = len(self.threads)
            self.b += b'\x04' + uv(self.threads[tid]) + uv(pid) + uv(tid) + uv(6) + b'inject'
        return self.threads[tid]

    def interval(self, t, pid, tid, st, state, cpu, bl, rq, waker=None, wst=None):
        th = self.thread(pid, tid)
        wt = self.thread(pid, waker) if waker is not None else None
        self.b += offcpu(t - self.ev, th, st, state, cpu, cpu, bl, rq,
                         waker=wt, ws=wst if wst is not None else 0, wc=cpu)
        self.ev = t

    def sample(self, t, pid, tid, st):
        th = self.thread(pid, tid)
        self.b += b'\x05' + sv(t - self.st) + uv(th) + uv(st)
        self.st = t


CHAINS = {
    'pipe': (['inj_pipe_reader', 'inj_pipe_wait', 'inj_sys_read'],
             ['inj_pipe_writer', 'inj_pipe_wake', 'inj_sys_write']),
    'mutex': (['inj_mutex_waiter', 'inj_mutex_lock', 'inj_mutex_wait', 'inj_sys_futex'],
              ['inj_mutex_holder', 'inj_mutex_unlock', 'inj_mutex_wake', 'inj_sys_futex']),
    'sleep': (['inj_sleeper', 'inj_sleep_wait', 'inj_sys_nanosleep'], None),
}


def write_run(outdir, truth, elf, fault):
    recs = [json.loads(ln) for ln in open(truth)]
    clock = next(r for r in recs if r['ev'] == 'clock')
    m2r = clock['real_ns'] - clock['mono_ns']
    t0 = min(r['enter_ns'] for r in recs if r['ev'] == 'wait') - 10 ** 8
    start_us = (t0 + m2r) // 1000
    base = start_us * 1000 - m2r		# mono time of the profile start
    addr = {n: a for a, n in zip(elf.addrs, elf.names)}
    s = [Stream(start_us, 0), Stream(start_us, 1)]
    kern = [0xffffffff81000000 + 0x1234, 0xffffffff81000000 + 0x5678]
    pid = 4242
    ev = []
    n = 0
    for r in recs:
        if r['ev'] != 'wait' or r['scn'] not in CHAINS or r['nvcsw'] < 1:
            continue
        n += 1
        if fault == 'missing' and r['scn'] == 'pipe' and n <= 2:
            continue
        user, wuser = CHAINS[r['scn']]
        off = r['exit_ns'] - r['enter_ns'] - r['cpu_ns']
        if fault == 'slow' and r['scn'] == 'mutex':
            off = int(off * 1.05)
        t = r['enter_ns'] + r['cpu_ns'] // 2 - base
        wake = (r['wake_lo_ns'] + r['wake_hi_ns']) // 2 - base if r['waker_tid'] else None
        bl = min(max(wake - t, 0), off) if wake is not None else off
        ev.append((t, r, user, wuser, bl, off - bl))
    for r in recs:
        if r['ev'] == 'phase' and r['scn'] == 'runq':
            left = r['end_ns'] - r['start_ns'] - r['cpu_ns']
            m = -(-left // (4 * 10 ** 6))
            step = (r['end_ns'] - r['start_ns']) // m
            t = r['start_ns'] - base
            while left > 0:
                d = min(left, 4 * 10 ** 6)
                ev.append((t, dict(tid=r['tid'], scn='runq', waker_tid=0),
                           ['inj_runq_busy', 'inj_runq_spin'], None, 0, d))
                left -= d
                t += step
    ev.sort(key=lambda e: e[0] + e[4] + e[5])	# written at switch-in
    for i, (t, r, user, wuser, bl, rq) in enumerate(ev):
        c = s[i % 2]
        st = c.stack([addr[f] + 4 for f in user], kern)
        if wuser and r['waker_tid']:
            wt = r['waker_tid'] if fault != 'waker' else r['waker_tid'] + 1
            wst = c.stack([addr[f] + 4 for f in wuser], kern)
            c.interval(t, pid, r['tid'], st, 1, i % 2, bl, rq, waker=wt, wst=wst)
        else:
            c.interval(t, pid, r['tid'], st, 0 if r['scn'] == 'runq' else 1, i % 2,
                       0 if r['scn'] == 'runq' else bl, rq)
        c.sample(t + bl + rq + 1000, pid, r['tid'], st)
    s[0].b += trigger(10 ** 6, 1, 0, 0, 0, 0, 0, 'manual')
    raw = os.path.join(outdir, 'raw')
    for i, c in enumerate(s):
        with open(os.path.join(raw, 'cpu%d' % i), 'wb') as f:
            f.write(c.b)
    k = len(ev)
    w = len(ev) - 2 * (fault == 'stats')
    stats = ('state stopped\nsamples_taken %d\nsamples_written %d\nsamples_dropped 0\n'
             'offcpu_taken %d\noffcpu_written %d\noffcpu_filtered 2\noffcpu_lost 0\n'
             'offcpu_dropped_busy 0\noffcpu_dropped_buffer_full 1\noffcpu_open_at_stop 3\n'
             'wakeups_taken 50\nwakeups_attached 45\nwakeups_unslotted 4\n'
             'wakeups_dropped_busy 1\ntriggers_written 1\ntriggers_dropped 0\n'
             'cpu0 taken %d written %d dropped 0\n' %
             (len(ev), len(ev), len(ev) + 6, w, len(ev), len(ev)))
    for name, v in (('stats', stats), ('dmesg', 'spulse: loaded\n'), ('insmod.rc', '0'),
                    ('inject.rc', '0'), ('trigger.rc', '0')):
        with open(os.path.join(raw, name), 'w') as f:
            f.write(v)


def main():
    inject, spulse, work = sys.argv[1:4]
    fails = 0
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, 'truth'))
    truth = os.path.join(work, 'truth', 'truth.jsonl')
    subprocess.run([inject, '-n', '20', '-r', '400', '-o', truth], check=True,
                   stdout=subprocess.DEVNULL)
    elf = ElfSyms(inject)
    for fault, must_fail in (('none', []), ('missing', ['raw.pipe_waits_present']),
                             ('slow', ['raw.mutex_offcpu_time']),
                             ('waker', ['raw.pipe_waker', 'raw.mutex_waker']),
                             ('stats', ['raw.stats_offcpu', 'raw.stats_match_streams'])):
        out = os.path.join(work, fault)
        os.makedirs(os.path.join(out, 'raw'))
        os.makedirs(os.path.join(out, 'bin'))
        shutil.copy(inject, os.path.join(out, 'bin', 'inject'))
        shutil.copy(spulse, os.path.join(out, 'bin', 'spulse'))
        shutil.copy(truth, os.path.join(out, 'raw', 'truth.jsonl'))
        with open(os.path.join(out, 'params'), 'w') as f:
            f.write('NWAITS=20\nFLIGHT_S=2\n')
        write_run(out, truth, elf, fault)
        p = subprocess.run([sys.executable, os.path.join(HERE, 'check_latency.py'), out,
                            os.path.join(out, 'result')], env=dict(os.environ, LATENCY_RUNS='raw'),
                           stdout=subprocess.PIPE, text=True)
        failed = {ln.split()[1].rstrip(':') for ln in p.stdout.splitlines()
                  if ln.startswith('FAIL')}
        if fault == 'none':
            ok = not failed
            why = '; '.join(ln for ln in p.stdout.splitlines() if ln.startswith('FAIL'))
        else:
            ok = set(must_fail) <= failed
            why = 'expected %s among failures %s' % (must_fail, sorted(failed))
        fails += not ok
        print('%s latency_selftest.%s%s' % ('PASS' if ok else 'FAIL', fault,
                                            '' if ok and fault == 'none' else ': ' + why[:600]))
        if fault == 'none' and os.environ.get('V'):
            print(p.stdout)
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
