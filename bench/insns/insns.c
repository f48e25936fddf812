// SPDX-License-Identifier: GPL-2.0
/*
 * make bench-insns: a QEMU TCG plugin that counts the instructions the
 * guest executes, per translation block, and writes a snapshot every time
 * the guest executes the marker instruction `xchg %bx,%bx` (66 87 db),
 * which no real code uses.
 *
 * Counting: at translation, every block gets an inline 64-bit add of 1 to
 * its own counter (QEMU_PLUGIN_INLINE_ADD_U64, no helper call); a block is
 * keyed by (start address, instruction count), so a retranslation reuses
 * its counter. Instructions = executions x the block's instruction count.
 * A block left in the middle by an exception (a page fault on one of its
 * loads) is still counted whole: deterministic, a small overcount.
 * Exact only with one TCG thread (-accel tcg,thread=single): the adds are
 * not atomic.
 *
 * At a marker (an instruction callback registered on it when its block is
 * translated, called before it executes) the plugin appends to the output
 * file the instructions executed since the previous marker:
 *
 *   S SEQ VCPU TOTAL KERNEL USER
 *   F INSNS NAME          (one per kernel function with INSNS > 0)
 *   ...
 *
 * KERNEL counts blocks at or above 0xffff800000000000, USER the rest;
 * functions come from the guest's /proc/kallsyms, which the guest copies to
 * the host file named by kallsyms= before its first marker (read there,
 * once: the first marker only opens the count, S 0 has no F lines).
 * At exit: "E MARKERS BLOCKS". The first line: "H insns 1 VCPUS".
 *
 * usage: -plugin libinsns.so,out=FILE,kallsyms=FILE
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define KERNEL_START 0xffff800000000000ULL
#define CHUNK 4096

struct block {
	uint64_t pc;
	uint64_t n;		/* instructions in the block */
	uint64_t count;		/* executions (the inline add's target) */
	uint64_t last;		/* count at the previous marker */
	int64_t fn;		/* kallsyms index; -2 not looked up, -1 none */
};

struct sym {
	uint64_t addr;
	char *name;
};

static FILE *out;
static const char *ksyms_path;
static struct sym *syms;
static size_t nsyms;
static int ksyms_loaded;
static uint64_t *fn_insns;	/* per symbol, since the previous marker */
static uint64_t unknown_insns;	/* kernel blocks outside every symbol */
/*
 * User code by where it is mapped (processes share the ranges): the
 * non-PIE executables (python3, the static workloads) below 4 GiB, PIE
 * executables (spulse, perf) in 0x55..-0x56.., shared libraries and
 * ld.so near the top of the address space (0x7f..), anything else
 */
enum { UR_EXE, UR_PIE, UR_LIB, UR_OTHER, UR_NR };
static const char *const ur_name[UR_NR] = {
	"[user:exe]", "[user:pie]", "[user:lib]", "[user:other]",
};
static uint64_t ur_insns[UR_NR];

static unsigned int user_range(uint64_t pc)
{
	if (pc < 0x100000000ULL)
		return UR_EXE;
	if (pc >= 0x550000000000ULL && pc < 0x570000000000ULL)
		return UR_PIE;
	if (pc >= 0x7f0000000000ULL && pc < 0x800000000000ULL)
		return UR_LIB;
	return UR_OTHER;
}

static struct block **chunks;
static size_t nchunks, nblocks;
static struct block **table;	/* open addressing, pointers into chunks */
static size_t table_cap;
static uint64_t seq;

static void die(const char *msg)
{
	fprintf(stderr, "insns plugin: %s\n", msg);
	if (out)
		fprintf(out, "X %s\n", msg);
	exit(1);
}

static size_t hash(uint64_t pc, uint64_t n)
{
	uint64_t h = (pc ^ (n << 56)) * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> 17);
}

static void table_put(struct block *b)
{
	size_t i = hash(b->pc, b->n) & (table_cap - 1);

	while (table[i])
		i = (i + 1) & (table_cap - 1);
	table[i] = b;
}

static void table_grow(void)
{
	size_t i, old = table_cap;
	struct block **ot = table;

	table_cap = old ? old * 2 : 1 << 16;
	table = calloc(table_cap, sizeof(*table));
	if (!table)
		die("out of memory");
	for (i = 0; i < old; i++)
		if (ot[i])
			table_put(ot[i]);
	free(ot);
}

static struct block *block_get(uint64_t pc, uint64_t n)
{
	size_t i;
	struct block *b;

	if (table_cap) {
		for (i = hash(pc, n) & (table_cap - 1); table[i];
		     i = (i + 1) & (table_cap - 1))
			if (table[i]->pc == pc && table[i]->n == n)
				return table[i];
	}
	if ((nblocks + 1) * 2 > table_cap)
		table_grow();
	if (nblocks % CHUNK == 0) {	/* blocks never move: inline adds point at them */
		struct block **nc = realloc(chunks, (nchunks + 1) * sizeof(*chunks));

		if (!nc)
			die("out of memory");
		chunks = nc;
		chunks[nchunks] = calloc(CHUNK, sizeof(struct block));
		if (!chunks[nchunks])
			die("out of memory");
		nchunks++;
	}
	b = &chunks[nblocks / CHUNK][nblocks % CHUNK];
	nblocks++;
	b->pc = pc;
	b->n = n;
	b->fn = -2;
	table_put(b);
	return b;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* "ADDR TYPE NAME [MODULE]": text symbols only (t T w W) */
static void ksyms_load(void)
{
	FILE *f;
	char line[512], type, name[256], mod[128];
	unsigned long long addr;
	size_t cap = 0;

	ksyms_loaded = 1;
	if (!ksyms_path)
		return;
	f = fopen(ksyms_path, "r");
	if (!f) {
		fprintf(out, "X cannot open kallsyms %s: %s\n", ksyms_path, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		int k = sscanf(line, "%llx %c %255s %127s", &addr, &type, name, mod);

		if (k < 3 || !addr || !strchr("tTwW", type))
			continue;
		if (nsyms == cap) {
			struct sym *ns;

			cap = cap ? cap * 2 : 65536;
			ns = realloc(syms, cap * sizeof(*syms));
			if (!ns)
				die("out of memory");
			syms = ns;
		}
		syms[nsyms].addr = addr;
		if (k == 4) {
			char buf[400];

			snprintf(buf, sizeof(buf), "%s %s", name, mod);
			syms[nsyms].name = strdup(buf);
		} else {
			syms[nsyms].name = strdup(name);
		}
		if (!syms[nsyms].name)
			die("out of memory");
		nsyms++;
	}
	fclose(f);
	qsort(syms, nsyms, sizeof(*syms), sym_cmp);
	fn_insns = calloc(nsyms ? nsyms : 1, sizeof(*fn_insns));
	if (!fn_insns)
		die("out of memory");
	fprintf(out, "K %zu %s\n", nsyms, ksyms_path);
}

static int64_t sym_find(uint64_t pc)
{
	size_t lo = 0, hi = nsyms;

	if (!nsyms || pc < syms[0].addr)
		return -1;
	while (hi - lo > 1) {	/* syms[lo].addr <= pc < syms[hi].addr */
		size_t mid = lo + (hi - lo) / 2;

		if (syms[mid].addr <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return (int64_t)lo;
}

static void snapshot(unsigned int vcpu, int functions)
{
	uint64_t total = 0, kernel = 0, user = 0;
	size_t i, j;

	for (i = 0; i < nchunks; i++) {
		size_t end = i + 1 < nchunks ? CHUNK : nblocks - i * CHUNK;

		for (j = 0; j < end; j++) {
			struct block *b = &chunks[i][j];
			uint64_t d = (b->count - b->last) * b->n;

			if (!d)
				continue;
			b->last = b->count;
			total += d;
			if (b->pc < KERNEL_START) {
				user += d;
				if (functions)
					ur_insns[user_range(b->pc)] += d;
				continue;
			}
			kernel += d;
			if (!functions)
				continue;
			if (b->fn == -2)
				b->fn = sym_find(b->pc);
			if (b->fn < 0)
				unknown_insns += d;
			else
				fn_insns[b->fn] += d;
		}
	}
	fprintf(out, "S %" PRIu64 " %u %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
		seq, vcpu, total, kernel, user);
	if (functions) {
		for (i = 0; i < nsyms; i++)
			if (fn_insns[i]) {
				fprintf(out, "F %" PRIu64 " %s\n", fn_insns[i], syms[i].name);
				fn_insns[i] = 0;
			}
		if (unknown_insns)
			fprintf(out, "F %" PRIu64 " [unknown]\n", unknown_insns);
		unknown_insns = 0;
		for (i = 0; i < UR_NR; i++)
			if (ur_insns[i]) {
				fprintf(out, "F %" PRIu64 " %s\n", ur_insns[i], ur_name[i]);
				ur_insns[i] = 0;
			}
	}
	fflush(out);
	seq++;
}

static void marker(unsigned int vcpu, void *udata)
{
	(void)udata;
	/* the first marker opens the count: everything before it (boot) is dropped */
	if (!ksyms_loaded) {
		snapshot(vcpu, 0);
		ksyms_load();
		return;
	}
	snapshot(vcpu, 1);
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);
	struct block *b = block_get(qemu_plugin_tb_vaddr(tb), n);

	(void)id;
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &b->count, 1);
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		const unsigned char *d = qemu_plugin_insn_data(insn);

		if (qemu_plugin_insn_size(insn) == 3 && d[0] == 0x66 &&
		    d[1] == 0x87 && d[2] == 0xdb)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, marker,
							       QEMU_PLUGIN_CB_NO_REGS, NULL);
	}
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
	(void)id;
	(void)p;
	fprintf(out, "E %" PRIu64 " %zu\n", seq, nblocks);
	fclose(out);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *path = NULL;
	int i;

	if (!info->system_emulation) {
		fprintf(stderr, "insns plugin: system emulation only\n");
		return -1;
	}
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4)) {
			path = argv[i] + 4;
		} else if (!strncmp(argv[i], "kallsyms=", 9)) {
			ksyms_path = argv[i] + 9;
		} else {
			fprintf(stderr, "insns plugin: unknown argument %s (out=FILE, kallsyms=FILE)\n",
				argv[i]);
			return -1;
		}
	}
	if (!path) {
		fprintf(stderr, "insns plugin: out=FILE is required\n");
		return -1;
	}
	out = fopen(path, "w");
	if (!out) {
		fprintf(stderr, "insns plugin: %s: %s\n", path, strerror(errno));
		return -1;
	}
	setvbuf(out, NULL, _IOFBF, 1 << 20);
	fprintf(out, "H insns 1 %d\n", info->system.smp_vcpus);
	fflush(out);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
