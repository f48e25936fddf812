#!/usr/bin/env python3
"""Find build/workload/stall's injected stall in flight dumps
(make demo-latency, suite demos).

    stall_check.py SPULSE pick DUMP...   print the dump that holds the stall
    stall_check.py SPULSE check DUMP     assert that DUMP holds it

The stall (tests/workload/stall.c): the flusher thread sleeps 120 ms in
slow_disk_write() holding cache_lock, and main's lookup_cache() waits for
that lock. In the off-CPU intervals (`spulse latency --json`, every
interval, whole stacks) that is:

  flusher  an S interval blocked >= 100 ms whose stack holds
           slow_disk_write and flusher (a sleep of 120 ms cannot be
           shorter; a loaded host only makes it longer);
  main     an S interval blocked >= 50 ms in the futex wait under
           handle_request (__lll_lock_wait), that began while the flusher
           slept, woken by the flusher's thread from a stack holding
           flusher (its unlock). main may still be in its current request
           when the flusher takes the lock, a few ms under TCG and more on
           a starved host, hence 50 ms, not 100.

No other interval has these stacks: the flusher's other sleeps are
disk_write()'s 1 ms and its 20 ms pause between flushes, and whatever
a starved VM stretches them to, they are not slow_disk_write.

`pick` prints the first dump that holds the stall (the flight recorder may
cut several: every trigger over the threshold that is not within --min-gap
of the last one cuts its own dump). A dump chosen by its longest interval
alone is not enough: on a loaded 2-core host the TCG guest's threads were
seen off CPU for 150-309 ms by noise, longer than the stall. With no dump
holding the stall, `pick` prints the dump holding the longest interval and
says so on stderr, exit 1.
"""
import json
import subprocess
import sys

FLUSHER_MIN_NS = 100_000_000
MAIN_MIN_NS = 50_000_000


def intervals(spulse, path):
    out = subprocess.run([spulse, 'latency', path, '--json', '--top', '1000000',
                          '--frames', '0'], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit('%s latency %s: exit %d: %s' % (spulse, path, out.returncode,
                                                         out.stderr.strip()))
    return json.loads(out.stdout)['longest']


def flusher_stall(ivs):
    """The flusher's slow_disk_write sleep, or None."""
    best = None
    for iv in ivs:
        if iv['state'] == 'S' and iv['blocked_ns'] >= FLUSHER_MIN_NS and \
                'slow_disk_write' in iv['stack'] and 'flusher' in iv['stack']:
            if best is None or iv['blocked_ns'] > best['blocked_ns']:
                best = iv
    return best


def main_wait(ivs, fl):
    """main's lock wait that the flusher's unlock ended, or None."""
    lo, hi = fl['time_ns'], fl['time_ns'] + fl['offcpu_ns']
    for iv in ivs:
        w = iv.get('waker') or {}
        if iv['state'] == 'S' and iv['blocked_ns'] >= MAIN_MIN_NS and \
                iv['pid'] == fl['pid'] and iv['tid'] != fl['tid'] and \
                '__lll_lock_wait' in iv['stack'] and 'handle_request' in iv['stack'] and \
                lo <= iv['time_ns'] <= hi and \
                w.get('tid') == fl['tid'] and 'flusher' in w.get('stack', []):
            return iv
    return None


def ms(ns):
    return '%.3f ms' % (ns / 1e6)


def check(spulse, path):
    ivs = intervals(spulse, path)
    fl = flusher_stall(ivs)
    if fl is None:
        longest = ivs[0] if ivs else None
        print('FAIL: %s: no S interval blocked >= 100 ms in slow_disk_write <- flusher '
              '(%d intervals; the longest: %s)' % (
                  path, len(ivs), longest and '%d/%d %s %s: %s' % (
                      longest['pid'], longest['tid'], longest['state'],
                      ms(longest['offcpu_ns']), ' <- '.join(longest['stack'][8:]))))
        return 1
    mw = main_wait(ivs, fl)
    if mw is None:
        print('FAIL: %s: flusher %d/%d slept %s in slow_disk_write, but no lock wait '
              '>= 50 ms under handle_request woken by it' % (
                  path, fl['pid'], fl['tid'], ms(fl['blocked_ns'])))
        return 1
    print('%s: flusher %d/%d S blocked %s in slow_disk_write; main %d/%d S blocked %s '
          'in __lll_lock_wait <- ... <- handle_request, woken by %d/%d from flusher' % (
              path, fl['pid'], fl['tid'], ms(fl['blocked_ns']), mw['pid'], mw['tid'],
              ms(mw['blocked_ns']), mw['waker']['pid'], mw['waker']['tid']))
    return 0


def pick(spulse, paths):
    longest = None
    for p in paths:
        ivs = intervals(spulse, p)
        fl = flusher_stall(ivs)
        if fl is not None and main_wait(ivs, fl) is not None:
            print(p)
            return 0
        if ivs and (longest is None or ivs[0]['offcpu_ns'] > longest[1]):
            longest = (p, ivs[0]['offcpu_ns'])
    if longest is None:
        print('stall_check: no dump holds an off-CPU interval', file=sys.stderr)
        return 1
    print('stall_check: no dump holds the stall; the one with the longest interval (%s) is %s'
          % (ms(longest[1]), longest[0]), file=sys.stderr)
    print(longest[0])
    return 1


def usage():
    print(__doc__.split('\n\n')[1], file=sys.stderr)
    return 2


if __name__ == '__main__':
    a = sys.argv[1:]
    if len(a) >= 3 and a[1] == 'pick':
        sys.exit(pick(a[0], a[2:]))
    if len(a) == 3 and a[1] == 'check':
        sys.exit(check(a[0], a[2]))
    sys.exit(usage())
