/* SPDX-License-Identifier: MIT */
/*
 * An ELF with known function names for the report/flame/export tests; the
 * tests point hand-written module-relative frames into these functions.
 * known_inlined() is inlined into known_inline_caller() even at -O0
 * (always_inline), for --inline / --srcline tests: find the lines by the
 * KNOWN:* markers (grep -n), kept on their statements' lines.
 */
#define NOINLINE __attribute__((noinline, used))

volatile int sink;

NOINLINE void known_alpha_leaf(void)
{
	for (int i = 0; i < 100; i++)
		sink += i;
}

NOINLINE void known_beta_mid(void)
{
	known_alpha_leaf();
	sink++;
}

NOINLINE void known_gamma_root(void)
{
	known_beta_mid();
	sink++;
}

static inline __attribute__((always_inline)) int known_inlined(int x)
{
	return x * 3 + sink; /* KNOWN:inline-body */
}

NOINLINE int known_inline_caller(int x)
{
	return known_inlined(x) + 1; /* KNOWN:inline-call */
}

int main(void)
{
	known_gamma_root();
	sink += known_inline_caller(sink);
	return 0;
}
