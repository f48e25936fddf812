#!/usr/bin/env python3
"""Raw reader of the lockdown suite (runs in the guest, in the host root):
reads what spulse.ko published in DIR's relay files (cpuN, meta) and appends
it to OUT/NAME.TAG, as spulse-drain reads them: each file from where earlier
readers stopped (DIR/stats: a CPU's "read", "meta_read") and never past what
was published (the file's size), so no byte is read twice or skipped.

usage: rawread.py DIR OUT TAG SECONDS [--finish]

For SECONDS it reads, writing "flush" to DIR/control every 0.3 s (so
partial sub-buffers are published); with --finish it then writes "stop" and
"flush" and reads until nothing is left. Prints one line per file:
"NAME start S read N size Z" (Z: the file's size at the end); exit 1 when a
file cannot be opened or read (the error is printed).
"""
import os
import re
import sys
import time


def stats_starts(d):
    starts = {}
    with open(os.path.join(d, 'stats')) as f:
        for line in f:
            m = re.match(r'(cpu\d+) taken .* read (\d+)$', line.strip())
            if m:
                starts[m.group(1)] = int(m.group(2))
            m = re.match(r'meta_read (\d+)$', line.strip())
            if m:
                starts['meta'] = int(m.group(1))
    return starts


def control(d, cmd):
    with open(os.path.join(d, 'control'), 'w') as f:
        f.write(cmd + '\n')


def main():
    d, out, tag, secs = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    finish = '--finish' in sys.argv[5:]
    names = sorted(n for n in os.listdir(d) if re.fullmatch(r'cpu\d+|meta', n))
    starts = stats_starts(d)
    inp = {}
    for n in names:
        try:
            fd = os.open(os.path.join(d, n), os.O_RDONLY | os.O_NONBLOCK)
        except OSError as e:
            print('%s open: %s' % (n, e))
            return 1
        inp[n] = dict(fd=fd, start=starts.get(n, 0), got=0,
                      out=open(os.path.join(out, '%s.%s' % (n, tag)), 'ab'))

    def read_all():
        moved = 0
        for n, i in inp.items():
            while True:
                avail = os.fstat(i['fd']).st_size - i['start'] - i['got']
                if avail <= 0:
                    break
                try:
                    b = os.read(i['fd'], min(avail, 1 << 20))
                except BlockingIOError:
                    break
                if not b:
                    break
                i['out'].write(b)
                i['got'] += len(b)
                moved += len(b)
        return moved

    t_end = time.monotonic() + secs
    next_flush = 0.0
    while time.monotonic() < t_end:
        if time.monotonic() >= next_flush:
            control(d, 'flush')
            next_flush = time.monotonic() + 0.3
        read_all()
        time.sleep(0.05)
    if finish:
        control(d, 'stop')
        control(d, 'flush')
        idle = 0
        while idle < 3:
            idle = idle + 1 if not read_all() else 0
            time.sleep(0.1)
    else:
        read_all()
    for n, i in inp.items():
        i['out'].close()
        print('%s start %d read %d size %d' % (n, i['start'], i['got'],
                                               os.fstat(i['fd']).st_size))
        os.close(i['fd'])
    return 0


if __name__ == '__main__':
    sys.exit(main())
