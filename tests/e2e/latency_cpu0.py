#!/usr/bin/env python3
"""Who ran on CPU 0 while the latency suite's control spinner waited.

Reads OUTDIR/RUN/sched-cpu0.trace (sched_switch and workqueue execute
events of CPU 0, trace clock mono, written by tests/e2e/guest-latency.sh
when run-latency.sh ran with LATENCY_TRACE=1) and the run's truth.jsonl
(the runq_control phase: its tid and CLOCK_MONOTONIC window). Prints, for
the phase, the spinner's run-queue waits as the scheduler saw them
(switched out runnable until switched in again) and the time each other
task (a kworker: per work function) ran on CPU 0 inside them, largest
first. A diagnostic: asserts nothing; check_latency.py prints it as INFO
lines when the trace exists.

usage: latency_cpu0.py OUTDIR RUN [TOP]
"""
import collections
import json
import os
import re
import sys

SW = re.compile(r'\[(\d+)\].*?\s(\d+\.\d+): sched_switch: prev_comm=(.*?) prev_pid=(\d+) '
                r'prev_prio=\d+ prev_state=(\S+) ==> next_comm=(.*?) next_pid=(\d+)')


EV = re.compile(r'\[(\d+)\].*?\s(\d+\.\d+): (sched_switch|workqueue_execute_start|'
                r'workqueue_execute_end):')
WQ = re.compile(r'function (\S+)')


def phase(truth_path):
    with open(truth_path) as f:
        for line in f:
            r = json.loads(line)
            if r.get('ev') == 'phase' and r.get('scn') == 'runq_control':
                return r
    return None


def analyse(out, run, top=12):
    d = os.path.join(out, run)
    tpath = os.path.join(d, 'sched-cpu0.trace')
    if not os.path.exists(tpath):
        return ['%s: no sched-cpu0.trace (run with LATENCY_TRACE=1)' % run]
    ph = phase(os.path.join(d, 'truth.jsonl'))
    if not ph:
        return ['%s: no runq_control phase in the truth' % run]
    tid, lo, hi = ph['tid'], ph['start_ns'], ph['end_ns']
    per = collections.Counter()	# (comm, pid, work fn) -> ns run inside the waits
    cnt = collections.Counter()
    waiting = None		# start of the spinner's current runnable wait
    cur, last, fn = None, None, ''	# task on CPU 0, last event, its work item
    waits, wait_ns, nsw = 0, 0, 0
    with open(tpath, errors='replace') as f:
        for line in f:
            m = EV.search(line)
            if not m or m.group(1) != '000':
                continue
            t = int(round(float(m.group(2)) * 1e9))
            if waiting is not None and cur is not None:
                a, b = max(last, lo), min(t, hi)
                if b > a:
                    per[cur + (fn,)] += b - a
            last = t
            if m.group(3) == 'workqueue_execute_start':
                w = WQ.search(line)
                fn = w.group(1) if w else '?'
                if waiting is not None and cur is not None:
                    cnt[cur + (fn,)] += 1
                continue
            if m.group(3) == 'workqueue_execute_end':
                fn = ''
                continue
            m = SW.search(line)
            if not m:
                continue
            nsw += 1
            pcomm, ppid, pst, ncomm, npid = (m.group(3), int(m.group(4)), m.group(5),
                                             m.group(6), int(m.group(7)))
            inside = lo <= t <= hi
            if ppid == tid and inside and pst.startswith('R'):
                waiting = t
                waits += 1
            if npid == tid and waiting is not None:
                wait_ns += min(t, hi) - max(waiting, lo) if t > lo else 0
                waiting = None
            cur, fn = (ncomm, npid), ''
            if waiting is not None:
                cnt[cur + (fn,)] += 1
    lines = ['%s: CPU 0 trace: %d switches; control spinner tid %d: %d runnable waits, %.2f ms '
             'in the phase (%.1f ms)' % (run, nsw, tid, waits, wait_ns / 1e6, (hi - lo) / 1e6)]
    for (comm, pid, wfn), ns in per.most_common(top):
        lines.append('%s:   %-24s pid %-6d %8.2f ms in %d runs%s' %
                     (run, comm, pid, ns / 1e6, cnt[(comm, pid, wfn)],
                      ' (work %s)' % wfn if wfn else ''))
    return lines


if __name__ == '__main__':
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    for ln in analyse(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 12):
        print(ln)
