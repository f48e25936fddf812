#!/usr/bin/env python3
"""Suite nmi: check the stacks of an event=bp spool (tests/nmi/run.sh).

usage: stacks.py SPOOL.json PHASE WRITTEN LEAF

SPOOL.json is `spulse export --format json` of the phase's spool; kernel
frames are resolved here, independently of the exporter, against the
guest's /proc/kallsyms copy next to it (kallsyms.txt). Checks:
  * the spool holds samples, and no more than the module wrote (WRITTEN);
  * every sample's leaf is a kernel frame: LEAF "=SYM" wants exactly SYM's
    address (an execute breakpoint fires before the function's first
    instruction), "~REGEX" a function whose name matches REGEX (a
    watchpoint fires after the accessing instruction, inside its function);
  * phase exec: every sample of pingpong has its user chain (pp_read, or
    with a frame-pointer walk the frameless read wrapper, called from
    pp_ping or pp_pong) and vfs_read in its kernel chain, and at least one
    such sample exists;
  * phase fork: some samples have user frames (the forking task's stack).
Prints one summary line; exit status 1 with the first problem otherwise.
"""
import bisect
import json
import os
import re
import sys


def load_kallsyms(path):
    syms = []
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) >= 3 and w[1] in 'tTwW':
                syms.append((int(w[0], 16), w[2]))
    syms.sort()
    return syms


def resolve(syms, keys, addr):
    i = bisect.bisect_right(keys, addr) - 1
    if i < 0:
        return None, 0
    return syms[i][1], addr - syms[i][0]


def main():
    path, phase, written, leafspec = (sys.argv[1], sys.argv[2],
                                      int(sys.argv[3]), sys.argv[4])
    with open(path) as f:
        j = json.load(f)
    syms = load_kallsyms(os.path.join(os.path.dirname(path), 'kallsyms.txt'))
    keys = [a for a, _ in syms]
    at, rx = [], None
    if leafspec.startswith('='):
        at = [a for a, n in syms if n == leafspec[1:]]
        if not at:
            print('%s not in kallsyms.txt' % leafspec[1:])
            return 1
    else:
        rx = re.compile(leafspec[1:])
    frames = {f['id']: f for f in j['frames']}
    threads = {t['id']: t for t in j['threads']}
    samples = j['samples']
    if not samples:
        print('no samples in the spool')
        return 1
    if len(samples) > written:
        print('%d samples in the spool, the module wrote %d' % (len(samples), written))
        return 1
    pp = withuser = sched = tabled = 0
    leaves = {}
    for n, s in enumerate(samples):
        st = s['stack']
        leaf = frames[st[0]]
        addr = int(leaf['addr'], 16)
        name, off = resolve(syms, keys, addr)
        ok = leaf['kind'] == 'kernel' and (addr in at if at else
                                           name is not None and rx.search(name))
        if not ok:
            print('sample %d (tid %s %s): leaf %s %s+0x%x (%s), want %s' %
                  (n, threads[s['thread']]['tid'], threads[s['thread']]['comm'],
                   leaf['kind'], name, off, leaf['addr'], leafspec))
            return 1
        leaves[name] = leaves.get(name, 0) + 1
        user = [frames[i]['function'] or frames[i]['name'] for i in st
                if frames[i]['kind'] in ('module', 'user')]
        withuser += bool(user)
        kchain = [resolve(syms, keys, int(frames[i]['addr'], 16))[0]
                  for i in st if frames[i]['kind'] == 'kernel']
        sched += '__schedule' in kchain
        if phase != 'exec' or threads[s['thread']]['comm'] != 'pingpong':
            continue
        pp += 1
        kern = [resolve(syms, keys, int(frames[i]['addr'], 16))[0]
                for i in st if frames[i]['kind'] == 'kernel']
        if 'vfs_read' not in kern:
            print('pingpong sample %d: no vfs_read in the kernel chain %s' % (n, kern))
            return 1
        # pp_read's frame: a table walk has it; a frame-pointer walk from
        # the frameless read wrapper (glibc's __libc_read) skips it (its
        # return address is at sp, not at bp + 8), as perf's FP chains do
        if 'pp_read' in user:
            k = user.index('pp_read')
            tabled += 1
        else:
            k = next((i for i, f in enumerate(user) if 'read' in f), -1)
        if k < 0 or k + 1 >= len(user) or user[k + 1] not in ('pp_ping', 'pp_pong'):
            print('pingpong sample %d: no read called from pp_ping/pp_pong: %s'
                  % (n, user))
            return 1
    if phase == 'exec' and not pp:
        print('no sample of pingpong')
        return 1
    if phase == 'fork' and not withuser:
        print('no sample has user frames')
        return 1
    comms = sorted({threads[s['thread']]['comm'] for s in samples})
    print('%d samples (%d with user frames, %d inside __schedule), leaves %s; %scomms %s' %
          (len(samples), withuser, sched,
           ','.join('%s:%d' % kv for kv in sorted(leaves.items())),
           '%d of pingpong with read <- pp_ping|pp_pong and vfs_read (%d with '
           'pp_read); ' % (pp, tabled)
           if phase == 'exec' else '', ','.join(comms[:8])))
    return 0


if __name__ == '__main__':
    sys.exit(main())
