#!/usr/bin/env python3
# Guest helper for tests/kmod/vm-unwind-smoke.sh: writes unwind-table messages
# (include/spulse/unwind.h) to debugfs spulse/unwind, one per write(2).
#   vm-unwind.py PID KIND     ADD table 1 (one row of KIND over 4 GiB) and
#                             MAP PID's executable file mappings onto it
#   vm-unwind.py garbage      bad magic / unknown table / short write
#   vm-unwind.py big N        ADD table 9 with N rows (for the memory bound)
#   vm-unwind.py del ID       DEL table ID
#   vm-unwind.py PID cfa_bp N ADD table 1 of N CFA_BP rows (CFA = BP + 16,
#                             BP at CFA - 16: a frame-pointer build's body
#                             rule) over PID's executable and MAP it
# Prints "op rc" per message (rc = bytes written or -errno).
import errno, os, struct, sys

U = '/sys/kernel/debug/spulse/unwind'
MAGIC, VERSION = 0x54555053, 1
KINDS = {'none': 0, 'cfa_sp': 1, 'end': 6, 'unknown': 7}


def msg(op, body):
    return struct.pack('<IHHII', MAGIC, VERSION, op, 16 + len(body), 0) + body


def add(tid, rows, lo=0, hi=0xffffffff):
    row = struct.Struct('<IihBB').pack
    return msg(1, b''.join([struct.pack('<IIQQ20sB3x', tid, len(rows), lo,
                                        hi, b'', 0)] +
                           [row(s, c, b, k, 0) for s, k, c, b in rows]))


def mapset(pid, maps):
    ent = struct.Struct('<QQQII').pack
    return msg(3, b''.join([struct.pack('<IIQ', pid, len(maps), 0)] +
                           [ent(s, e, b, t, 0) for s, e, b, t in maps]))


def put(what, m):
    fd = os.open(U, os.O_WRONLY)
    try:
        rc = os.write(fd, m)
    except OSError as e:
        rc = -e.errno
    os.close(fd)
    print(what, rc)
    return rc


def exe_maps(pid):
    out = []
    exe = os.readlink('/proc/%d/exe' % pid)
    for line in open('/proc/%d/maps' % pid):
        f = line.split()
        if len(f) >= 6 and 'x' in f[1] and f[5] == exe:
            s, e = (int(x, 16) for x in f[0].split('-'))
            out.append((s, e, s, 1))
    return out


a = sys.argv[1:]
if a[0] == 'garbage':
    m = bytearray(add(5, [(0, 6, 0, 0)]))
    m[0] ^= 1
    put('bad-magic', bytes(m))
    put('unknown-table', mapset(1, [(0x400000, 0x401000, 0, 77)]))
    put('short', b'\0' * 8)
    put('bad-bp_off', add(6, [(0, 1, 8, 4)]))
elif a[0] == 'big':
    n = int(a[1])
    put('big', add(9, [(i * 4, 1, 8, 0) for i in range(n)], 0, 4 * n))
elif a[0] == 'del':
    put('del', msg(2, struct.pack('<II', int(a[1]), 0)))
elif len(a) == 3 and a[1] == 'cfa_bp':
    pid, n = int(a[0]), int(a[2])
    m = [(s, e, s, t) for s, e, b, t in exe_maps(pid)]
    step = (max(e - s for s, e, b, t in m) // n + 16) & ~15
    put('add', add(1, [(i * step, 2, 16, -16) for i in range(n)], 0,
                   step * n))
    print('maps', len(m))
    put('map', mapset(pid, m))
else:
    pid, kind = int(a[0]), KINDS[a[1]]
    put('add', add(1, [(0, kind, 0, 0)]))
    m = exe_maps(pid)
    print('maps', len(m))
    put('map', mapset(pid, m))
