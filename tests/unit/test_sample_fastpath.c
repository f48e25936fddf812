// SPDX-License-Identifier: MIT
/*
 * The sample fast path spulse_dec_samples() (SSE2 + BMI2 on x86-64 when the
 * CPU has it, the portable loop otherwise) against the general decoder
 * spulse_dec_record() on randomized runs of sample records: fields of every
 * varint length 1..10, overlong and overflowing encodings, out-of-range
 * thread and stack ids, time overflow and negative time. The fast path plus
 * the general decoder on what it leaves must give the same samples, the
 * same final time and the same error (offset and message) as the general
 * decoder alone, with and without an output array, for every batch size.
 */
#include <stdlib.h>
#include <string.h>

#include "fastpath_gen.h"
#include "internal.h"

#define NTHREADS 200	/* ids of 1 and 2 bytes */
#define NSTACKS 20000	/* ids of 1, 2 and 3 bytes */

static void put_id(struct tbuf *b, uint32_t limit, unsigned int bad_pct)
{
	uint64_t v;

	if (rnd() % 100 < bad_pct)	/* out of range, any length */
		v = limit + (rnd() % 3 ? rnd() % 1000 : of_len(1 + rnd() % 10) >> 1);
	else
		v = rnd() % limit;
	put_field(b, v, bad_pct);
}

/*
 * Between samples, now and then another record (python, process
 * deactivation, a cpu record that changes the cpu of later samples) or,
 * in broken runs, a byte that is no tag (0x85, which is not even a stop
 * byte): the fast paths must stop exactly there.
 */
static void put_other(struct tbuf *b, unsigned int bad_pct)
{
	switch (rnd() % 4) {
	case 0:
		TB(b, spulse_enc_python, (uint32_t)(rnd() % 300), rnd() & 1);
		break;
	case 1:
		TB(b, spulse_enc_process_deactivate, (uint32_t)(rnd() % 300));
		break;
	case 2:
		TB(b, spulse_enc_ext_cpu, (uint32_t)(rnd() % 200));
		break;
	default:
		if (rnd() % 100 < bad_pct) {
			uint8_t junk = 0x85;

			tb_raw(b, &junk, 1);
		}
		break;
	}
}

static void gen_samples(struct tbuf *b, unsigned int count, unsigned int bad_pct)
{
	unsigned int i;

	for (i = 0; i < count; i++) {
		uint64_t z;
		uint8_t tag = SPULSE_TAG_SAMPLE;

		if (rnd() % 16 == 0)
			put_other(b, bad_pct);

		tb_raw(b, &tag, 1);
		switch (rnd() % 8) {
		case 0:	/* any length 1..10, any sign */
			z = of_len(1 + (unsigned int)(rnd() % 10));
			break;
		case 1:	/* small negative */
			z = spulse_zigzag(-(int64_t)(rnd() % 5000));
			break;
		default:	/* small positive, 1..4 bytes */
			z = spulse_zigzag((int64_t)(rnd() % (1u << (7 * (1 + rnd() % 4)))));
			break;
		}
		if (rnd() % 100 >= bad_pct && (z & 1) && rnd() % 2)
			z &= ~1ULL;	/* keep time mostly valid */
		put_field(b, z, bad_pct);
		put_id(b, NTHREADS, bad_pct);
		put_id(b, NSTACKS, bad_pct);
	}
}

struct outcome {
	struct spulse_sample *s;
	size_t n;
	int64_t time_ns;
	uint64_t info_samples;
	int ret;
	struct spulse_error err;
	size_t end;
};

/* Decoder with NTHREADS threads and NSTACKS stacks; returns data start. */
static size_t setup(struct spulse_dec *dec, const struct tbuf *b, size_t defs_end)
{
	struct spulse_error err;
	struct spulse_record rec;
	size_t pos, n;

	spulse_dec_init(dec, NULL);
	assert_int_equal(spulse_dec_header(dec, b->p, b->len, &n, &err), 1);
	pos = n;
	while (pos < defs_end) {
		assert_int_equal(spulse_dec_record(dec, b->p + pos, b->len - pos,
						   pos, &rec, &n, &err), 1);
		pos += n;
	}
	return pos;
}

/* mode 0: general decoder only; 1: fast path with output; 2: fast path
 * validating only (NULL); 3: portable loop with output; 4: fast path of a
 * trusted decoder (Replay iteration; valid input only) with output. */
static void run(const struct tbuf *b, size_t defs_end, int mode, size_t batch,
		struct outcome *o)
{
	struct spulse_dec dec;
	struct spulse_record rec;
	size_t pos = setup(&dec, b, defs_end), n, k;
	struct spulse_sample tmp[600];

	dec.trusted = mode == 4;
	memset(o, 0, sizeof(*o));
	o->s = malloc((b->len + 1) * sizeof(*o->s));
	assert_non_null(o->s);
	for (;;) {
		if (mode && pos < b->len && b->p[pos] == SPULSE_TAG_SAMPLE) {
			if (mode == 1 || mode == 4)
				k = spulse_dec_samples(&dec, b->p + pos, b->len - pos,
						       tmp, batch, &n);
			else if (mode == 3)
				k = spulse_dec_samples_portable(&dec, b->p + pos,
								b->len - pos, tmp,
								batch, &n);
			else
				k = spulse_dec_samples(&dec, b->p + pos, b->len - pos,
						       NULL, batch, &n);
			assert_true(k <= batch);
			assert_true(n <= b->len - pos);
			if (mode != 2)
				memcpy(o->s + o->n, tmp, k * sizeof(*tmp));
			else	/* only the count and time are known */
				memset(o->s + o->n, 0, k * sizeof(*tmp));
			o->n += k;
			pos += n;
			if (k)
				continue;
		}
		o->ret = spulse_dec_record(&dec, b->p + pos, b->len - pos, pos,
					   &rec, &n, &o->err);
		if (o->ret != 1)
			break;
		if (rec.tag == SPULSE_TAG_SAMPLE)
			o->s[o->n++] = mode == 2 ? (struct spulse_sample){ 0 } :
				       rec.u.sample;
		pos += n;
	}
	o->end = pos;
	o->time_ns = dec.time_ns;
	o->info_samples = dec.info.samples;
	spulse_dec_fini(&dec);
}

static void same(const struct outcome *a, const struct outcome *b, bool values)
{
	if (a->n != b->n)
		print_message("# ref %zu samples ret %d at %llu: %s; got %zu ret %d at %llu: %s\n",
			      a->n, a->ret, (unsigned long long)a->err.offset, a->err.msg,
			      b->n, b->ret, (unsigned long long)b->err.offset, b->err.msg);
	assert_int_equal(a->n, b->n);
	assert_int_equal(a->end, b->end);
	assert_int_equal(a->ret, b->ret);
	assert_true(a->time_ns == b->time_ns);
	assert_int_equal(a->info_samples, b->info_samples);
	if (a->ret < 0) {
		assert_int_equal(a->err.offset, b->err.offset);
		assert_string_equal(a->err.msg, b->err.msg);
	}
	if (values)
		assert_memory_equal(a->s, b->s, a->n * sizeof(*a->s));
}

static void check_stream(unsigned int count, unsigned int bad_pct)
{
	static const size_t batches[] = { 1, 7, SIZE_MAX };
	struct tbuf b = { 0 };
	struct outcome ref, o;
	size_t defs_end, j, cut;
	uint32_t i;

	tb_header(&b);
	TB(&b, spulse_enc_frame_abs, 0, SPULSE_FRAME_USER, 1);
	for (i = 0; i < NSTACKS; i++)
		TB(&b, spulse_enc_stack, i, SPULSE_STACK_ROOT, 0);
	for (i = 0; i < NTHREADS; i++)
		TB(&b, spulse_enc_thread, i, 1, i, "", 0);
	defs_end = b.len;
	gen_samples(&b, count, bad_pct);
	/* whole input, then cut at a random point (a truncated tail) */
	for (cut = 0; cut < 2; cut++) {
		if (cut)
			b.len = defs_end + (size_t)(rnd() % (b.len - defs_end + 1));
		run(&b, defs_end, 0, 0, &ref);
		for (j = 0; j < sizeof(batches) / sizeof(batches[0]); j++) {
			size_t batch = batches[j] == SIZE_MAX ? 600 : batches[j];
			int mode;

			for (mode = 1; mode <= 3; mode++) {
				run(&b, defs_end, mode,
				    mode == 2 ? batches[j] : batch, &o);
				same(&ref, &o, mode != 2);
				free(o.s);
			}
			/*
			 * Trusted (Replay iteration): over the prefix the
			 * general decoder accepted, the same samples.
			 */
			{
				struct tbuf v = b;

				v.len = ref.end;
				run(&v, defs_end, 4, batch, &o);
				assert_int_equal(o.ret, 0);
				assert_int_equal(o.end, ref.end);
				assert_int_equal(o.n, ref.n);
				assert_true(o.time_ns == ref.time_ns);
				assert_memory_equal(o.s, ref.s, o.n * sizeof(*o.s));
				free(o.s);
			}
		}
		free(ref.s);
	}
	tb_free(&b);
}

static void fast_path_matches_general_decoder_on_valid_runs(void **state)
{
	unsigned int k;

	(void)state;
	rs = 0x9e3779b97f4a7c15ULL;
	for (k = 0; k < 10; k++)
		check_stream(2000, 0);
}

static void fast_path_matches_general_decoder_on_broken_runs(void **state)
{
	unsigned int k;

	(void)state;
	rs = 12345;
	for (k = 0; k < 120; k++)
		check_stream(1 + (unsigned int)(rnd() % 300),
			     1 + (unsigned int)(rnd() % 4));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fast_path_matches_general_decoder_on_valid_runs),
		cmocka_unit_test(fast_path_matches_general_decoder_on_broken_runs),
	};

	return cmocka_run_group_tests_name("sample_fastpath", tests, NULL, NULL);
}
