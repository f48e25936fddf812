#!/usr/bin/env python3
"""Send human-monitor commands to a QEMU started with VM_QMP=PATH
(tests/vm/run-vm.sh) and print the replies.

usage: qmp.py PATH 'info registers -a' ['sendkey alt-sysrq-l' ...]
"""
import json
import socket
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.strip())
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
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
    for c in sys.argv[2:]:
        r = call('human-monitor-command', **{'command-line': c})
        print(r.get('return', r.get('error')))


main()
