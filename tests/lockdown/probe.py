#!/usr/bin/env python3
"""Open each FILE for reading and, with MODE rw, also for writing; print
"FILE r=RESULT w=RESULT" per file, RESULT being ok or the errno's name
(EPERM, EACCES, ...). Nothing is read or written.

usage: probe.py r|rw FILE...
"""
import errno
import os
import sys


def try_open(path, flags):
    try:
        os.close(os.open(path, flags))
        return 'ok'
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))


mode = sys.argv[1]
for p in sys.argv[2:]:
    r = try_open(p, os.O_RDONLY)
    w = try_open(p, os.O_WRONLY) if mode == 'rw' else '-'
    print('%s r=%s w=%s' % (p, r, w))
