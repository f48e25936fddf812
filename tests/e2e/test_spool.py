#!/usr/bin/env python3
"""Self-test of spool.RawSpool (the latency suite's independent reader):
hand-encoded streams with tag 9 records, valid and corrupt. Prints
PASS/FAIL lines; exit status 1 on any failure.

usage: test_spool.py [SPULSE]   (with SPULSE: also compares a synthetic
                                 spool's record counts with `spulse dump`)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spool import MAGIC, RawSpool, SpoolError, run  # noqa: E402

fails = 0


def check(name, ok, why=''):
    global fails
    fails += not ok
    print('PASS %s' % name if ok else 'FAIL %s: %s' % (name, why), flush=True)


def uv(n):
    out = bytearray()
    while True:
        c = n & 0x7f
        n >>= 7
        if n:
            out.append(c | 0x80)
        else:
            out.append(c)
            return bytes(out)


def sv(n):
    return uv((n << 1) ^ (n >> 63) if n >= 0 else ((n << 1) ^ -1) & ((1 << 64) - 1))


def ext(kind, payload, ln=None):
    return b'\x09' + uv(kind) + uv(len(payload) if ln is None else ln) + payload


def offcpu(dt, th, st, state, cout, cin, bl, rq, waker=None, ws=0, wc=0):
    p = sv(dt) + uv(th) + uv(st) + uv(state) + uv(cout) + uv(cin) + uv(bl) + uv(rq)
    p += uv(0) if waker is None else uv(waker + 1) + uv(ws) + uv(wc)
    return ext(2, p)


def trigger(dt, reason, seq, val, thr, ws, we, text):
    t = text.encode()
    return ext(3, sv(dt) + uv(reason) + uv(seq) + uv(val) + uv(thr) + uv(ws) +
               uv(we) + uv(len(t)) + t)


HDR = MAGIC + uv(1700000000000000) + uv(1000)
DEFS = (b'\x04' + uv(0) + uv(10) + uv(11) + uv(3) + b'abc' +      # thread 0
        b'\x04' + uv(1) + uv(10) + uv(12) + uv(1) + b'w' +        # thread 1
        b'\x02' + uv(0) + b'\x01' + uv(0x401000) +                 # frame 0 user
        b'\x02' + uv(1) + b'\x02' + uv(0xffffffff81000000) +       # frame 1 kernel
        b'\x03' + uv(0) + uv(0) + uv(0) +                          # stack 0 root
        b'\x03' + uv(1) + uv(1) + uv(1))                           # stack 1 -> 0


def parse(b):
    try:
        return RawSpool(data=b), None
    except SpoolError as e:
        return None, e


def main():
    good = (HDR + DEFS + ext(1, uv(1)) + b'\x05' + sv(500) + uv(0) + uv(1) +
            offcpu(1000, 0, 1, 1, 1, 0, 20000000, 1500, waker=1, ws=1, wc=0) +
            offcpu(-200, 0, 1, 0, 0, 0, 0, 3000) +
            ext(77, b'\xff\xff\xff') +
            trigger(50, 1, 0, 0, 0, 0, 0, 'manual'))
    s, e = parse(good)
    check('rawspool.valid_ext_stream', s is not None, str(e))
    if s:
        check('rawspool.sample_cpu', s.samples == [(0, 1, 500, 1)], repr(s.samples))
        o = s.offcpu
        check('rawspool.offcpu_fields', len(o) == 2 and o[0]['t_out'] == 1000 and
              o[0]['blocked_ns'] == 20000000 and o[0]['runq_ns'] == 1500 and
              o[0]['waker'] == 1 and o[0]['waker_stack'] == 1 and
              o[0]['cpu_out'] == 1 and o[0]['cpu_in'] == 0, repr(o))
        check('rawspool.event_clock_signed', len(o) == 2 and o[1]['t_out'] == 800 and
              o[1]['waker'] is None, repr(o))
        check('rawspool.unknown_kind_skipped', s.ext_skipped == 1, str(s.ext_skipped))
        check('rawspool.trigger', len(s.triggers) == 1 and s.triggers[0]['t'] == 850 and
              s.triggers[0]['text'] == 'manual', repr(s.triggers))
    # a cut inside the last record is a truncated tail, not corruption
    s, e = parse(good[:-3])
    check('rawspool.truncated_tail', s is not None and s.truncated and
          len(s.triggers) == 0, str(e))
    bad = [
        ('kind0', ext(0, b''), 'reserved'),
        ('len_over_4096', b'\x09' + uv(200) + uv(4097), 'longer than 4096'),
        ('payload_left_over', ext(1, uv(1) + b'\x00'), 'length mismatch'),
        ('payload_short', ext(1, uv(300), ln=1), 'length mismatch'),
        ('cpu_65536', ext(1, uv(65536)), 'cpu out of range'),
        ('offcpu_fwd_thread', offcpu(1, 5, 1, 1, 0, 0, 1, 1), 'undefined thread'),
        ('offcpu_fwd_stack', offcpu(1, 0, 9, 1, 0, 0, 1, 1), 'undefined stack'),
        ('offcpu_state_9', offcpu(1, 0, 1, 9, 0, 0, 1, 1), 'state out of range'),
        ('offcpu_R_blocked', offcpu(1, 0, 1, 0, 0, 0, 5, 1), 'preempted'),
        ('offcpu_R_waker', offcpu(1, 0, 1, 0, 0, 0, 0, 1, waker=1, ws=0), 'preempted'),
        ('offcpu_fwd_waker', offcpu(1, 0, 1, 1, 0, 0, 1, 1, waker=7, ws=0), 'undefined waker'),
        ('event_before_start', offcpu(-1, 0, 1, 1, 0, 0, 1, 1), 'before profile start'),
        ('offcpu_overflow', offcpu(1, 0, 1, 1, 0, 0, (1 << 63) - 1, 0), 'overflows'),
        ('trigger_reason_5', trigger(1, 5, 1, 0, 0, 0, 0, ''), 'reason'),
        ('trigger_window', trigger(1, 3, 1, 0, 0, 9, 8, ''), 'window'),
        ('trigger_text_257', trigger(1, 1, 1, 0, 0, 0, 0, 'x' * 257), 'text longer'),
    ]
    for name, rec, want in bad:
        s, e = parse(HDR + DEFS + rec)
        off = len(HDR + DEFS)
        check('rawspool.rejects_' + name, e is not None and want in str(e) and
              off <= e.off < off + len(rec),
              'got %s' % (e if e else 'accepted'))
    if len(sys.argv) > 1:
        path = '/tmp/test_spool.%d.spulse' % os.getpid()
        rc, _, err = run([sys.argv[1], 'synth', '-o', path, '--samples', '2000', '--quiet'])
        if rc != 0:
            check('rawspool.synth_matches_dump', False, err.strip())
        else:
            rc, out, _ = run([sys.argv[1], 'dump', path])
            kinds = [ln.split()[0] for ln in out.splitlines() if ln and ln[0] != '#']
            s = RawSpool(path)
            got = (len(s.modules), len(s.frames), len(s.stacks), len(s.threads), len(s.samples))
            want = tuple(kinds.count(k) for k in ('module', 'frame', 'stack', 'thread', 'sample'))
            check('rawspool.synth_matches_dump', got == want, 'raw %s dump %s' % (got, want))
            os.unlink(path)
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
