#!/usr/bin/env python3
"""Do `spulse flame --folded` and `spulse report` agree on every function?

usage: flame_report_agree.py SPULSE SPOOL [--folded FILE] [ARGS...]

ARGS (e.g. --off-cpu) are given to both commands. For every function name:
  self:  the report's self total (summed over its rows of that name, one
         per module) equals the sum of the folded lines whose leaf it is;
  total: the folded inclusive total (each line counted once for a name
         however often the name occurs in it, as the report counts a
         sample once per function) equals the report's total when one row
         has the name; with several rows (one name in several modules) it
         lies between the largest row total and their sum;
and every name on one side is on the other, and both sides hold the same
number of samples. --folded FILE checks FILE instead of running flame (the
suite's test that a doctored folded output fails). Prints one line per
disagreement (at most 20) and a summary; exits 0 when they agree, 1 when
not, 2 when a command fails or its output is not understood.
"""
import collections
import json
import subprocess
import sys


def die(msg):
    print('flame_report_agree: ' + msg)
    sys.exit(2)


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, errors='surrogateescape')
    if p.returncode != 0:
        die('%s: rc %d: %s' % (' '.join(cmd), p.returncode, p.stderr.strip()[-300:]))
    return p.stdout


def main(argv):
    if len(argv) < 3:
        die(__doc__.strip().splitlines()[2])
    sp, spool, rest = argv[1], argv[2], argv[3:]
    folded_file = None
    if '--folded' in rest:
        i = rest.index('--folded')
        if i + 1 >= len(rest):
            die('--folded needs a file')
        folded_file = rest[i + 1]
        rest = rest[:i] + rest[i + 2:]
    if folded_file:
        with open(folded_file, errors='surrogateescape') as f:
            folded = f.read()
    else:
        folded = run([sp, 'flame', spool, '--folded'] + rest)
    try:
        # report --off-cpu's self is the wait site (the first frame that
        # is not the scheduler's); the folded leaf is the stack's leaf, as
        # report --sched-leaf counts it
        leaf = ['--sched-leaf'] if '--off-cpu' in rest else []
        rep = json.loads(run([sp, 'report', spool, '--json', '--top', '1000000000']
                             + rest + leaf))
        rows, rep_all = rep['rows'], int(rep['total'])
    except (ValueError, KeyError, TypeError) as e:
        die('report --json not understood: %s' % e)

    f_self, f_incl = collections.Counter(), collections.Counter()
    f_all = 0
    for n, line in enumerate(folded.splitlines(), 1):
        if not line.strip():
            continue
        stack, _, count = line.rpartition(' ')
        if not stack or not count.isdigit():
            die('folded line %d not "frame;...;frame COUNT": %r' % (n, line[:200]))
        c = int(count)
        frames = stack.split(';')
        f_all += c
        f_self[frames[-1]] += c
        for name in set(frames):
            f_incl[name] += c

    r_self, r_tot = collections.Counter(), collections.defaultdict(list)
    for r in rows:
        r_self[r['function']] += int(r['self'])
        r_tot[r['function']].append(int(r['total']))

    bad = []
    if f_all != rep_all:
        bad.append('samples: folded %d, report %d' % (f_all, rep_all))
    for name in sorted(set(f_incl) | set(r_tot)):
        fi, fs = f_incl.get(name, 0), f_self.get(name, 0)
        if name not in r_tot:
            bad.append('%s: in the folded output (total %d) but not in the report'
                       % (name, fi))
            continue
        ts = r_tot[name]
        rs = r_self.get(name, 0)
        if fs != rs:
            bad.append('%s: self folded %d, report %d' % (name, fs, rs))
        ok = fi == ts[0] if len(ts) == 1 else max(ts) <= fi <= sum(ts)
        if not ok:
            bad.append('%s: total folded %d, report %s' % (
                name, fi, ts[0] if len(ts) == 1 else '%s (%d modules)' % (ts, len(ts))))
    for b in bad[:20]:
        print('DISAGREE ' + b)
    print('%s: %d functions, %d samples (folded %d lines)%s' % (
        'disagree' if bad else 'agree', len(r_tot), rep_all,
        sum(1 for line in folded.splitlines() if line.strip()),
        ', %d disagreements' % len(bad) if bad else ''))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
