"""bench-vm's python3 workload: a fixed amount of pure-Python CPU work.

usage: python3 pywork.py ROUNDS

Each round parses and evaluates a few arithmetic expressions with a small
recursive-descent parser, sorts and hashes the results in a dict and
formats them (function calls several levels deep, like an interpreter's
real work). Prints "py start" before the timed work and "py done ROUNDS
rounds in S s" (its own clock) after it; stdout is flushed at both.
"""
import sys
import time

EXPRS = ['(1+2)*3-4/5+(6*7-8)*(9+10)', '((2*3)+(4*5))*((6+7)-(8/9))*11-12',
         '1+2+3+4+5+6+7+8+9+10*(11-12)*(13+14)', '(((((1+2)*3)+4)*5)+6)*7']


def tokens(s):
    out, num = [], ''
    for ch in s:
        if ch.isdigit():
            num += ch
            continue
        if num:
            out.append(int(num))
            num = ''
        out.append(ch)
    if num:
        out.append(int(num))
    return out


class Parser:
    def __init__(self, toks):
        self.toks, self.i = toks, 0

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self):
        t = self.toks[self.i]
        self.i += 1
        return t

    def expr(self):
        v = self.term()
        while self.peek() in ('+', '-'):
            v = v + self.term() if self.take() == '+' else v - self.term()
        return v

    def term(self):
        v = self.factor()
        while self.peek() in ('*', '/'):
            if self.take() == '*':
                v = v * self.factor()
            else:
                d = self.factor()
                v = v / d if d else 0.0
        return v

    def factor(self):
        t = self.take()
        if t == '(':
            v = self.expr()
            self.take()
            return v
        return t


def one_round(r):
    seen = {}
    for k, e in enumerate(EXPRS):
        v = Parser(tokens(e)).expr() + r + k
        seen['%s:%d' % (e[:8], k)] = round(v, 3)
    return sum(hash(x) & 0xff for x in sorted(seen.values()))


def main():
    n = int(sys.argv[1])
    print('py start', flush=True)
    t0 = time.monotonic()
    acc = 0
    for r in range(n):
        acc ^= one_round(r)
    print('py done %d rounds in %.3f s (acc %d)' % (n, time.monotonic() - t0, acc),
          flush=True)


if __name__ == '__main__':
    main()
