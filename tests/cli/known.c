/* SPDX-License-Identifier: MIT */
/*
 * An ELF with known function names for the report/flame/export tests; the
 * tests point hand-written module-relative frames into these functions.
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

int main(void)
{
	known_gamma_root();
	return 0;
}
