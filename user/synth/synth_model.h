/* SPDX-License-Identifier: MIT */
/*
 * Room synth (user/synth/, build/synth/libsynth.a): synth_model.c, the
 * model behind `spulse synth`. Includes libspulse only.
 *
 * The synthetic workload model behind `spulse synth`: processes, threads,
 * mappings and a random call tree with Zipf-distributed hot paths, driven by
 * a seeded PRNG so that the same parameters always give the same profile.
 */
#ifndef SPULSE_SYNTH_MODEL_H
#define SPULSE_SYNTH_MODEL_H

#include <stdint.h>
#include <stdio.h>

#include <libspulse.h>

struct synth_params {
	uint64_t samples;
	uint32_t threads;
	uint32_t depth;		/* stacks deeper than this are truncated */
	uint64_t seed;
	/* extension records (FORMAT.md 3.10); all 0 = none, as before */
	uint32_t cpus;		/* CPUs: samples get cpu records (0 = none) */
	uint64_t offcpu;	/* off-CPU intervals spread over the run */
	uint64_t triggers;	/* trigger records */
	uint64_t unknown_ext;	/* extension records of an unknown kind */
};

/* What synth_generate() wrote besides samples. */
struct synth_stats {
	uint64_t offcpu, with_waker, triggers, unknown_ext;
	uint64_t by_state[SPULSE_STATE_MAX + 1];
};

/* Deterministic PRNG (splitmix64). */
struct synth_rng {
	uint64_t s;
};

static inline uint64_t synth_rng_next(struct synth_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint64_t synth_rng_below(struct synth_rng *r, uint64_t n)
{
	return n ? synth_rng_next(r) % n : 0;
}

/* Zipf (s = 1) over n items: item k has weight 1/(k+1). Integer only. */
struct synth_zipf {
	uint32_t n;
	uint64_t *cdf;
};

int synth_zipf_init(struct synth_zipf *z, uint32_t n);
uint32_t synth_zipf_pick(const struct synth_zipf *z, struct synth_rng *r);
void synth_zipf_free(struct synth_zipf *z);

/* Synthetic kernel symbol table (for the optional FILE.kallsyms sidecar). */
#define SYNTH_KBASE		0xffffffff81000000ULL
#define SYNTH_KFUNC_SIZE	0x800ULL
unsigned int synth_kernel_nfuncs(void);
const char *synth_kernel_func(unsigned int i);
int synth_write_kallsyms(FILE *f);

/* Fixed header values of every synthetic profile. */
uint64_t synth_start_us(void);
uint64_t synth_interval_us(void);

/**
 * synth_generate() - write a synthetic profile through a Recorder
 * @rec: open recorder
 * @p: parameters
 *
 * Return: 0 or a negative errno from libspulse.
 */
int synth_generate(struct spulse_recorder *rec, const struct synth_params *p);
/* The same, reporting the extension records written in @st (may be NULL). */
int synth_generate_stats(struct spulse_recorder *rec,
			 const struct synth_params *p, struct synth_stats *st);

#endif /* SPULSE_SYNTH_MODEL_H */
