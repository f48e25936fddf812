// SPDX-License-Identifier: MIT
/*
 * Reader cost is linear in the input whatever the ids (issue 10 item 15).
 * The pid -> active-modules map of the shared decoder used an unseeded hash
 * with linear probing: pids chosen so that the old hash put them in a few
 * probe clusters made `spulse check` take 14 s on 130,557 module records.
 * These tests craft exactly such pids (the old hash is reproduced here) and
 * count the probes the decoder's map makes: with colliding pids the cost
 * per record must stay within 5x of sequential pids and a small constant
 * per record. Under the old hash the colliding spool costs ~1000 probes
 * per record, so each test fails there.
 */
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "internal.h"

/* The hash the map used before it was seeded. */
static uint32_t old_hash(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return (uint32_t)x;
}

/* @n pids whose old hash has its low 12 bits 0: a few 2,500-key clusters. */
static uint32_t *colliding_pids(unsigned int n)
{
	uint32_t *p = malloc(n * sizeof(*p)), pid;
	unsigned int k = 0;

	assert_non_null(p);
	for (pid = 1; k < n; pid++)
		if ((old_hash(pid) & 0xfff) == 0)
			p[k++] = pid;
	return p;
}

static uint32_t *sequential_pids(unsigned int n)
{
	uint32_t *p = malloc(n * sizeof(*p));
	unsigned int k;

	assert_non_null(p);
	for (k = 0; k < n; k++)
		p[k] = 1000 + k;
	return p;
}

/*
 * Header, one module per pid of @pids[0..nmods), then @ndeact process
 * deactivations cycling over all @npids pids (those past nmods have no
 * modules: lookups that miss).
 */
static void build(struct tbuf *b, const uint32_t *pids, unsigned int nmods,
		  unsigned int npids, unsigned int ndeact)
{
	unsigned int i;

	tb_header(b);
	for (i = 0; i < nmods; i++)
		TB(b, spulse_enc_module, i, pids[i], 0x400000, 0x401000, 0,
		   "m", 1, NULL, 0);
	for (i = 0; i < ndeact; i++)
		TB(b, spulse_enc_process_deactivate, pids[i % npids]);
}

/* Decode @b with the shared decoder; return the pid map's probes. */
static uint64_t decode_probes(const struct tbuf *b, unsigned int want_mods)
{
	struct spulse_dec dec;
	struct spulse_record rec;
	struct spulse_error err;
	size_t pos, n;
	uint64_t probes;

	spulse_dec_init(&dec, NULL);
	assert_int_equal(spulse_dec_header(&dec, b->p, b->len, &n, &err), 1);
	for (pos = n; pos < b->len; pos += n)
		assert_int_equal(spulse_dec_record(&dec, b->p + pos, b->len - pos,
						   pos, &rec, &n, &err), 1);
	assert_int_equal(dec.defs.nmods, want_mods);
	probes = spulse_u32map_probes(&dec.defs.pid_active);
	spulse_dec_fini(&dec);
	return probes;
}

static void check_ratio(unsigned int nmods, unsigned int npids,
			unsigned int ndeact)
{
	uint32_t *cp = colliding_pids(npids), *sp = sequential_pids(npids);
	struct tbuf bc = { 0 }, bs = { 0 };
	uint64_t pc, ps, records = nmods + ndeact;

	build(&bc, cp, nmods, npids, ndeact);
	build(&bs, sp, nmods, npids, ndeact);
	pc = decode_probes(&bc, nmods);
	ps = decode_probes(&bs, nmods);
	print_message("# %u modules, %u deactivations: probes colliding %llu "
		      "sequential %llu (%.2f / %.2f per record)\n", nmods, ndeact,
		      (unsigned long long)pc, (unsigned long long)ps,
		      (double)pc / (double)records, (double)ps / (double)records);
	assert_true(pc <= 5 * ps + records);
	assert_true(pc <= 8 * records);
	tb_free(&bc);
	tb_free(&bs);
	free(cp);
	free(sp);
}

static void module_records_with_colliding_pids_cost_as_sequential(void **state)
{
	(void)state;
	check_ratio(20000, 20000, 0);
}

static void deactivations_of_colliding_pids_cost_as_sequential(void **state)
{
	(void)state;
	/* 20,000 modules, then 200,000 deactivations: half of them miss */
	check_ratio(20000, 40000, 200000);
}

/*
 * Every reader agrees on the crafted spool: all modules retired by the
 * deactivations, so a frame naming one of them is refused by each reader.
 */
static void every_reader_accepts_the_colliding_spool(void **state)
{
	uint32_t *cp = colliding_pids(4000);
	struct tbuf b = { 0 };
	size_t off;

	(void)state;
	build(&b, cp, 4000, 4000, 4000);
	expect_valid(b.p, b.len);
	off = TB(&b, spulse_enc_frame_module, 0, 3999, 0x10);
	expect_corrupt(b.p, b.len, off + 3, "frame names deactivated module 3999");
	tb_free(&b);
	free(cp);
}

/* Two maps draw different seeds: no fixed slot order to aim at. */
static void each_table_draws_its_own_seed(void **state)
{
	struct spulse_u32map a = { 0 }, c = { 0 };

	(void)state;
	assert_non_null(spulse_u32map_get(&a, 1, 0));
	assert_non_null(spulse_u32map_get(&c, 1, 0));
	assert_true(a.seed != 0 && c.seed != 0);
	assert_true(a.seed != c.seed);
	assert_non_null(spulse_u32map_find(&a, 1));
	assert_null(spulse_u32map_find(&a, 2));
	spulse_u32map_free(&a);
	spulse_u32map_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(module_records_with_colliding_pids_cost_as_sequential),
		cmocka_unit_test(deactivations_of_colliding_pids_cost_as_sequential),
		cmocka_unit_test(every_reader_accepts_the_colliding_spool),
		cmocka_unit_test(each_table_draws_its_own_seed),
	};

	return cmocka_run_group_tests_name("linear", tests, NULL, NULL);
}
