// SPDX-License-Identifier: GPL-2.0
/* The library tests/workload/dlwait.c copies and dlopens. */
int dlwait_lib_fn(int x);

int dlwait_lib_fn(int x)
{
	return x * 3 + 1;
}
