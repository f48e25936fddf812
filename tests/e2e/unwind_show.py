#!/usr/bin/env python3
"""Print one whole stack of a spool recorded with unwind tables, and the
coverage (share of user-mode samples that reach the thread entry) of each
spool given; for make demo-unwind (tests/vm/demo-unwind.sh).

    unwind_show.py TABLES.spulse [OTHER.spulse...]

The stack shown is the first sample with kernel frames whose user part
reaches the entry through python3's interpreter loop
(_PyEval_EvalFrameDefault) in 12 to 30 user frames (else the first with
kernel frames reaching the entry through python3). Kernel frames are named from
FILE.kallsyms, user frames as tests/e2e/unwind_check.py names them (nm -S
of the file and its debug file, the ELF entry point as _start); a frame of
a stripped file outside every symbol shows as FILE+OFFSET.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import unwind_check as uc  # noqa: E402
from spool import Kallsyms, RawSpool  # noqa: E402


def coverage(path):
    _, samples = uc.spulse_samples(path)
    user = [s for s in samples if s[2]]
    ok = sum(1 for s in user if uc.reaches_entry(s[2], s[3]))
    return ok, len(user)


def main():
    path = sys.argv[1]
    sp = RawSpool(path)
    ks = Kallsyms(path + '.kallsyms') if os.path.exists(path + '.kallsyms') else None
    shown = False
    for strict in (True, False):
        if not shown:
            shown = show_one(sp, ks, strict)
    if not shown:
        print('no sample with kernel frames reaching the entry through python3')
    print()
    for p in sys.argv[1:]:
        ok, n = coverage(p)
        print('%s: %d of %d user-mode samples (%.1f%%) reach the thread entry '
              '(_start, or start_thread/clone3)' % (os.path.basename(p), ok, n,
                                                    100.0 * ok / n if n else 0))
    return 0 if shown else 1


def show_one(sp, ks, strict):
    # strict: from the middle of the recording on (past the startup)
    order = sp.samples[len(sp.samples) // 2:] if strict else sp.samples
    for thread, stack, _t, _cpu in order:
        frs = sp.frames_of(stack)
        kern = [f for f in frs if f['kind'] == '2']
        user, trunc = [], False
        for f in frs:
            if f['kind'] == '0':
                user.append((sp.modules[f['module']]['path'], f['addr']))
            elif f['kind'] == '3':
                trunc = True
        if len(kern) < 3 or not user or not uc.reaches_entry(user, trunc) or \
                not any('python3' in u[0] for u in user) or len(user) < 12:
            continue
        if strict and (len(user) > 30 or not any(
                uc.symname(u) == '_PyEval_EvalFrameDefault' for u in user)):
            continue
        th = sp.threads[thread]
        print('one sample of %s (pid %d tid %d), %d kernel + %d user frames, leaf first:'
              % (th['comm'], th['pid'], th['tid'], len(kern), len(user)))
        for f in frs:
            if f['kind'] == '2':
                name = ks.name(f['addr']) if ks else None
                print('  kernel  %-28s %s' % ('%#x' % f['addr'], name or '?'))
            elif f['kind'] == '0':
                m = sp.modules[f['module']]
                name = uc.symname((m['path'], f['addr']))
                print('  user    %-28s %s' % ('%s+%#x' % (os.path.basename(m['path']), f['addr']),
                                            name or '?'))
            elif f['kind'] == '3':
                print('  [truncated]')
        return True
    return False


if __name__ == '__main__':
    sys.exit(main())
