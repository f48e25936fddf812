#!/usr/bin/env python3
"""Send human-monitor commands to a QEMU started with VM_QMP=PATH
(tests/vm/run-vm.sh) and print the replies.

usage: qmp.py PATH 'info registers -a' ['sendkey alt-sysrq-l' ...]

Also a module: hmp_session(PATH) returns a function that runs one
human-monitor command line and returns its reply (tests/rt/qmp-dump.py).
"""
import json
import socket
import sys


def hmp_session(path, timeout=None):
    s = socket.socket(socket.AF_UNIX)
    if timeout is not None:
        s.settimeout(timeout)
    s.connect(path)
    f = s.makefile('rw')

    def call(cmd, **args):
        f.write(json.dumps({'execute': cmd, 'arguments': args}) + '\n')
        f.flush()
        while True:
            r = json.loads(f.readline())
            if 'return' in r or 'error' in r:
                return r

    json.loads(f.readline())          # greeting
    call('qmp_capabilities')

    def hmp(line):
        r = call('human-monitor-command', **{'command-line': line})
        return r.get('return', r.get('error'))
    return hmp


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.strip())
    hmp = hmp_session(sys.argv[1])
    for c in sys.argv[2:]:
        print(hmp(c))


if __name__ == '__main__':
    main()
