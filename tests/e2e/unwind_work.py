"""Pure-Python workload for the unwind-vm suite and make demo-unwind.

    python3 unwind_work.py [SECONDS]

Runs for SECONDS (default 5) in two threads: the main thread recurses
(fib, a tree walk) and round-trips JSON; a worker thread (threading.Thread,
so its native stack starts in start_thread/clone3) runs regular expressions
over generated text. Everything is interpreted code in Debian's python3
(built without frame pointers), so samples land in _PyEval_EvalFrameDefault,
the JSON and re C code, the allocator and libc.
"""
import json
import re
import sys
import threading
import time


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def tree(depth):
    if depth == 0:
        return {'leaf': True, 'v': list(range(8))}
    return {'l': tree(depth - 1), 'r': tree(depth - 1), 'd': depth}


def walk(t):
    if 'leaf' in t:
        return sum(t['v'])
    return walk(t['l']) + walk(t['r']) + t['d']


def json_round(t):
    s = json.dumps(t, sort_keys=True)
    return len(json.loads(s)['l']), len(s)


WORD = re.compile(r'\b([a-z]+)(\d*)\b')


def regex_work(text):
    n = 0
    for m in WORD.finditer(text):
        n += len(m.group(1)) + len(m.group(2))
    return n + len(re.sub(r'[aeiou]+', '-', text))


def worker(stop, out):
    text = ' '.join('w%dord%d abc%d' % (i % 97, i, i % 13) for i in range(4000))
    total = 0
    while not stop.is_set():
        total += regex_work(text)
    out.append(total)


def main():
    secs = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    stop = threading.Event()
    out = []
    th = threading.Thread(target=worker, args=(stop, out), name='regex')
    th.start()
    t = tree(9)
    end = time.monotonic() + secs
    rounds = 0
    while time.monotonic() < end:
        fib(16)
        walk(t)
        json_round(t)
        rounds += 1
    stop.set()
    th.join()
    print('unwind_work done %d rounds, regex %d' % (rounds, out[0] if out else -1))


if __name__ == '__main__':
    main()
