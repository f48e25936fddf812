#!/usr/bin/env python3
"""Register and stack dump of every vCPU of a QEMU started with VM_QMP=PATH
(tests/vm/run-vm.sh), symbolized with the guest's /proc/kallsyms.

usage: qmp-dump.py SOCK KALLSYMS [SAMPLES [ADDR...]]

SAMPLES (default 3) times, 1 s apart: per vCPU its RIP as symbol+offset,
RFLAGS with IF (interrupts on/off), and on the first sample the kernel text
addresses found in 32 words above its RSP (a raw stack scan, as the
kernel's own oops printer does without frame pointers: candidates, not a
verified unwind). Each ADDR (hex) is then dumped as 8 bytes of guest memory
(x/8xb), e.g. the byte an "Oops: int3" says held the int3.
"""
import bisect
import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'vm'))
from qmp import hmp_session  # noqa: E402  (tests/vm/qmp.py)


def qmp_session(path):
    hmp = hmp_session(path, timeout=20)
    return lambda line: str(hmp(line))


def load_syms(path):
    syms = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 3 and p[1] in 'tTwW':
                syms.append((int(p[0], 16), p[2]))
    syms.sort()
    return syms


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.strip())
    hmp = qmp_session(sys.argv[1])
    syms = load_syms(sys.argv[2])
    keys = [a for a, _ in syms]
    lo, hi = (keys[0], keys[-1] + 0x100000) if keys else (0, 0)
    samples = int(sys.argv[3]) if len(sys.argv) > 3 else 3

    def sym(a):
        if not (lo <= a < hi):
            return None
        i = bisect.bisect_right(keys, a) - 1
        return '%s+0x%x' % (syms[i][1], a - syms[i][0]) if i >= 0 else None

    for n in range(samples):
        regs = hmp('info registers -a')
        cpus = re.split(r'^CPU#(\d+)', regs, flags=re.M)[1:]
        for cpu, body in zip(cpus[0::2], cpus[1::2]):
            rip = int(re.search(r'RIP=([0-9a-f]+)', body).group(1), 16)
            rfl = int(re.search(r'RFL=([0-9a-f]+)', body).group(1), 16)
            rsp = int(re.search(r'RSP=([0-9a-f]+)', body).group(1), 16)
            print('sample %d cpu %s: rip %x %s rflags %x (interrupts %s)' %
                  (n + 1, cpu, rip, sym(rip) or '?', rfl,
                   'on' if rfl & 0x200 else 'off'))
            if n == 0:
                words = hmp('x/32gx 0x%x' % rsp)
                vals = ' '.join(l.split(':', 1)[-1] for l in words.splitlines())
                cands = [sym(int(w, 16)) for w in re.findall(r'0x([0-9a-f]{16})', vals)]
                print('  stack text words: %s' % ' <- '.join(c for c in cands if c))
        if n + 1 < samples:
            time.sleep(1)
    for a in sys.argv[4:]:
        out = hmp('x/8xb 0x%s' % a.replace('0x', ''))
        print('x/8xb 0x%s (%s): %s' % (a.replace('0x', ''), sym(int(a, 16)) or '?',
                                       out.strip()))


main()
