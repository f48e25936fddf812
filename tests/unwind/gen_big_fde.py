#!/usr/bin/env python3
"""Write assembly for one function whose FDE has N rows (default 40000):
N one-byte instructions, each followed by a CFA offset change. libdw
re-executes an FDE's instructions for every row looked up, so building its
table unbounded costs N * FDE-bytes; the builder must cut it off.

usage: gen_big_fde.py [N] > big.s
"""
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 40000
out = [".section .note.GNU-stack,\"\",@progbits", ".text", ".globl big",
       ".type big,@function", "big:", ".cfi_startproc"]
for i in range(n):
    out.append("\tnop")
    out.append("\t.cfi_adjust_cfa_offset %d" % (8 if i % 2 == 0 else -8))
out += ["\tret", ".cfi_endproc", ".size big,.-big"]
print("\n".join(out))
