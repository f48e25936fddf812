"""What the host-side checkers (check_e2e.py, check_latency.py) share: one
line per assertion ("PASS name[: why]" / "FAIL name: why"), "INFO" lines,
the pass/fail counts, reading what the guest left in OUTDIR, and the dmesg
lines that are kernel reports."""
import os
import re

BAD_DMESG = re.compile(r'WARNING:|BUG:|sleeping function|Oops|general protection|'
                       r'KASAN|UBSAN|refcount_t|list_(add|del) corruption|'
                       r'rcu.*stall|hung_task|Call Trace')


class Verdict:
    """@out: OUTDIR; @why_on_pass: print the reason on PASS lines too."""

    def __init__(self, out, why_on_pass=True):
        self.out = out
        self.why_on_pass = why_on_pass
        self.counts = [0, 0]

    def check(self, name, ok, why=''):
        self.counts[0 if ok else 1] += 1
        shown = why if (why and (not ok or self.why_on_pass)) else ''
        print('%s %s%s' % ('PASS' if ok else 'FAIL', name, (': ' + shown) if shown else ''),
              flush=True)
        return ok

    @staticmethod
    def info(msg):
        print('INFO %s' % msg, flush=True)

    def rd(self, *p, default=None):
        try:
            with open(os.path.join(self.out, *p), errors='replace') as f:
                return f.read().strip()
        except OSError:
            return default

    def rc_of(self, *p):
        v = self.rd(*p)
        return int(v) if v is not None and v.lstrip('-').isdigit() else None
