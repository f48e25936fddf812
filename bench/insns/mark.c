// SPDX-License-Identifier: GPL-2.0
/*
 * make bench-insns: execute the marker instruction `xchg %bx,%bx`
 * (66 87 db) N times (default 1) and exit. bench/insns/insns.c, the TCG
 * plugin, writes a snapshot of the instruction counts at each one.
 * Static, no libc work beyond start-up: every run costs the same.
 */
#include <stdlib.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;

	while (n-- > 0)
		__asm__ volatile(".byte 0x66, 0x87, 0xdb" ::: "rbx", "memory");
	return 0;
}
