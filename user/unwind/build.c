/* SPDX-License-Identifier: MIT */
/*
 * libspulse-unwind: compile an ELF file's CFI into unwind-table rows with
 * elfutils libdw. docs/UNWIND.md, "How tables are built", is the prose.
 *
 * The CFI is never interpreted here: libdw (dwarf_cfi_addrframe) computes
 * the frame state for an address and says where its row ends; this file
 * maps each state onto an enum spulse_ut_kind and walks the executable
 * range row by row. FDE start addresses (read with dwarf_next_cfi) are
 * used only to skip the gaps that no FDE covers.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef SUT_HAVE_DEBUGINFOD
#include <elfutils/debuginfod.h>
#endif

#include "internal.h"

#define REG_RBP		6
#define REG_RSP		7
#define REG_RA		16
#define DEFAULT_DEBUG_DIR "/usr/lib/debug"

/* Work bounds (see "What tables cannot unwind"): libdw re-executes an
 * FDE's instructions for every row looked up in it, so one FDE costs
 * rows * bytes. Past SPAN_WORK_MAX the rest of that FDE is UNKNOWN; past
 * the whole-file budget the build fails with -E2BIG. */
#define SPAN_WORK_MAX	(1ull << 26)
#define FILE_WORK_BASE	(1ull << 27)
#define FILE_WORK_PER_BYTE 256

/* One FDE's address range, from either CFI source. */
struct span {
	uint64_t start, end;
	uint64_t cost;		/* bytes of CFI executed per lookup */
};

/* A row's rule before it becomes a struct spulse_ut_row. */
struct rule {
	uint8_t kind;
	int32_t cfa_off;
	int16_t bp_off;
};

struct cie_info {
	uint64_t offset;
	uint8_t fde_enc;
	bool ok;
};

struct builder {
	const char *path;
	char *err;
	size_t errlen;
	struct sut_table *t;
	uint32_t rows_cap;
	struct rule last;
	struct span *spans;
	size_t n_spans, spans_cap;
	Dwarf_CFI *cfi[2];
	int n_cfi;
	uint64_t work, work_max;	/* whole-file work and its bound */
	uint64_t cfi_bytes;	/* bytes of the CFI sections used */
	size_t cur_span;	/* span being walked (SIZE_MAX none) */
	uint64_t cur_work;	/* work spent in it */
	uint64_t plt[2][2];	/* .plt.sec, .plt.got [start, end) */
	uint64_t lazy[2];	/* .plt [start, end) when its layout is known */
	int lazy_thr;		/* byte of a .plt entry where its push ends */
};

static bool same_rule(const struct rule *a, const struct rule *b)
{
	return a->kind == b->kind && a->cfa_off == b->cfa_off &&
	       a->bp_off == b->bp_off;
}

/* Append a row for [@addr, ...) unless it repeats the previous rule. */
static int emit(struct builder *b, uint64_t addr, const struct rule *r)
{
	struct sut_table *t = b->t;
	struct spulse_ut_row *row;

	if (t->n_rows && same_rule(&b->last, r))
		return 0;
	if (t->n_rows >= SPULSE_UT_ROWS_MAX)
		return sut_err(b->err, b->errlen, -E2BIG,
			       "%s: more than %u unwind rows", b->path,
			       SPULSE_UT_ROWS_MAX);
	if (t->n_rows == b->rows_cap) {
		uint32_t cap = b->rows_cap ? b->rows_cap * 2 : 1024;
		void *p = realloc(t->rows, (size_t)cap * sizeof(*t->rows));

		if (!p)
			return sut_err(b->err, b->errlen, -ENOMEM,
				       "%s: out of memory", b->path);
		t->rows = p;
		b->rows_cap = cap;
	}
	row = &t->rows[t->n_rows++];
	row->start = (uint32_t)(addr - t->lo);
	row->cfa_off = r->cfa_off;
	row->bp_off = r->bp_off;
	row->kind = r->kind;
	row->flags = 0;
	b->last = *r;
	return 0;
}

/* ---- FDE ranges (only to skip gaps) ------------------------------------ */

/* Bytes of a DW_EH_PE format, 0 for LEB128, -1 unknown. */
static int enc_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_uleb128:
	case DW_EH_PE_sleb128:
		return 0;
	}
	return -1;
}

/* Read a fixed-size encoded value (no application). */
static bool read_enc(const uint8_t *p, const uint8_t *end, uint8_t enc,
		     uint64_t *v)
{
	int n = enc_size(enc);
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	if (n <= 0 || end - p < n)
		return false;
	switch (n) {
	case 2:
		memcpy(&u16, p, 2);
		*v = (enc & 0x08) ? (uint64_t)(int64_t)(int16_t)u16 : u16;
		break;
	case 4:
		memcpy(&u32, p, 4);
		*v = (enc & 0x08) ? (uint64_t)(int64_t)(int32_t)u32 : u32;
		break;
	default:
		memcpy(&u64, p, 8);
		*v = u64;
	}
	return true;
}

/* The FDE pointer encoding of an .eh_frame CIE ('R' augmentation). */
static bool cie_fde_enc(const Dwarf_CIE *cie, uint8_t *enc)
{
	const char *a = cie->augmentation;
	const uint8_t *d = cie->augmentation_data;
	const uint8_t *dend = d ? d + cie->augmentation_data_size : NULL;

	*enc = DW_EH_PE_absptr;
	if (!a || a[0] != 'z')
		return a && (a[0] == '\0' || strcmp(a, "S") == 0);
	for (a++; *a; a++) {
		int n;

		switch (*a) {
		case 'R':
			if (!d || d >= dend)
				return false;
			*enc = *d++;
			break;
		case 'L':
			if (!d || d >= dend)
				return false;
			d++;
			break;
		case 'P':
			if (!d || d >= dend)
				return false;
			n = enc_size(*d);
			if (n <= 0 || dend - d < 1 + n)
				return false;
			d += 1 + n;
			break;
		case 'S':
		case 'B':
		case 'G':
			break;
		default:
			return false;
		}
	}
	return true;
}

static int cie_cmp(const void *a, const void *b)
{
	const struct cie_info *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int add_span(struct builder *b, uint64_t start, uint64_t end,
		    uint64_t cost)
{
	if (start >= end)
		return 0;
	if (b->n_spans == b->spans_cap) {
		size_t cap = b->spans_cap ? b->spans_cap * 2 : 1024;
		void *p = realloc(b->spans, cap * sizeof(*b->spans));

		if (!p)
			return sut_err(b->err, b->errlen, -ENOMEM,
				       "%s: out of memory", b->path);
		b->spans = p;
		b->spans_cap = cap;
	}
	b->spans[b->n_spans++] = (struct span){ start, end, cost };
	return 0;
}

/*
 * Record the address range of every FDE in one CFI section. Entries libdw
 * cannot decode are skipped (libdw refuses them at lookup too). The number
 * of steps is bounded by the section size: every entry advances.
 */
static int collect_spans(struct builder *b, Elf *elf, Elf_Scn *scn, bool eh)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	struct cie_info *cies = NULL;
	size_t n_cies = 0, cap = 0;
	Elf_Data *data;
	GElf_Shdr sh;
	int pass, rc = 0;

	if (!ident || !gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
		return 0;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf || !data->d_size)
		return 0;
	b->cfi_bytes += data->d_size;
	for (pass = 0; pass < 2 && !rc; pass++) {
		Dwarf_Off off = 0, next;
		Dwarf_CFI_Entry e;

		while (off < data->d_size) {
			int r;

			next = (Dwarf_Off)-1;
			r = dwarf_next_cfi(ident, data, eh, off, &next, &e);
			if (r == 1)
				break;
			if (r < 0) {
				if (next == (Dwarf_Off)-1 || next <= off)
					break;
				off = next;
				continue;
			}
			if (dwarf_cfi_cie_p(&e)) {
				if (pass == 0) {
					struct cie_info ci = { off, 0, false };

					ci.ok = eh ? cie_fde_enc(&e.cie, &ci.fde_enc)
						   : true;
					if (n_cies == cap) {
						void *p;

						cap = cap ? cap * 2 : 64;
						p = realloc(cies, cap * sizeof(*cies));
						if (!p) {
							rc = -ENOMEM;
							break;
						}
						cies = p;
					}
					cies[n_cies++] = ci;
				}
			} else if (pass == 1) {
				struct cie_info key = { e.fde.CIE_pointer, 0, false };
				const struct cie_info *ci = NULL;
				const uint8_t *p = e.fde.start;
				uint8_t enc = DW_EH_PE_absptr;
				uint64_t loc, len;

				if (eh) {
					if (!n_cies)
						goto next;
					ci = bsearch(&key, cies, n_cies, sizeof(*cies),
						     cie_cmp);
					if (!ci || !ci->ok)
						goto next;
					enc = ci->fde_enc;
				}
				if ((enc & 0x80) || !read_enc(p, e.fde.end, enc, &loc))
					goto next;
				if ((enc & 0x70) == DW_EH_PE_pcrel)
					loc += sh.sh_addr +
					       (uint64_t)(p - (const uint8_t *)data->d_buf);
				else if ((enc & 0x70) != 0)
					goto next;
				p += enc_size(enc);
				if (!read_enc(p, e.fde.end, enc & 0x0f, &len))
					goto next;
				if (loc + len < loc)
					goto next;
				rc = add_span(b, loc, loc + len,
					      (uint64_t)(e.fde.end - e.fde.start) + 64);
				if (rc)
					break;
			}
next:
			if (next <= off)
				break;
			off = next;
		}
		if (pass == 0 && n_cies > 1)
			qsort(cies, n_cies, sizeof(*cies), cie_cmp);
	}
	free(cies);
	if (rc == -ENOMEM)
		return sut_err(b->err, b->errlen, rc, "%s: out of memory", b->path);
	return rc;
}

static Elf_Scn *find_section(Elf *elf, const char *name)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && strcmp(n, name) == 0)
			return scn;
	}
	return NULL;
}

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Index of the last span starting at or before @a, or SIZE_MAX. */
static size_t span_floor(const struct builder *b, uint64_t a)
{
	size_t lo = 0, hi = b->n_spans;

	if (!hi || b->spans[0].start > a)
		return SIZE_MAX;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->spans[mid].start <= a)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* ---- mapping a libdw frame state onto a row ----------------------------- */

static bool is_cfa_offset(const Dwarf_Op *ops, size_t n, int64_t *off)
{
	if (n == 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		*off = 0;
		return true;
	}
	if (n == 2 && ops[0].atom == DW_OP_call_frame_cfa &&
	    ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	return false;
}

/* DW_OP_bregN as one op: register and offset. */
static bool op_breg(const Dwarf_Op *op, unsigned *reg, int64_t *off)
{
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
		*reg = op->atom - DW_OP_breg0;
		*off = (int64_t)op->number;
		return true;
	}
	if (op->atom == DW_OP_bregx) {
		*reg = (unsigned)op->number;
		*off = (int64_t)op->number2;
		return true;
	}
	return false;
}

static bool fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/*
 * The lazy-binding PLT expression: breg7 N; breg16 0; lit15; and; litT;
 * ge; lit3; shl; plus. Sets @off = N and @thr = T.
 */
static bool is_plt_expr(const Dwarf_Op *o, size_t n, int64_t *off, int *thr)
{
	unsigned reg;
	int64_t z;

	if (n != 9 || !op_breg(&o[0], &reg, off) || reg != REG_RSP ||
	    !op_breg(&o[1], &reg, &z) || reg != REG_RA || z != 0 ||
	    o[2].atom != DW_OP_lit15 || o[3].atom != DW_OP_and ||
	    o[4].atom < DW_OP_lit0 || o[4].atom > DW_OP_lit15 ||
	    o[5].atom != DW_OP_ge || o[6].atom != DW_OP_lit3 ||
	    o[7].atom != DW_OP_shl || o[8].atom != DW_OP_plus)
		return false;
	*thr = o[4].atom - DW_OP_lit0;
	return true;
}

/*
 * Map libdw's state at one address to a rule. @plt_thr is set (else -1)
 * when the CFA is the PLT expression with a threshold other than 11: the
 * caller then expands it into exact CFA_SP rows per 16-byte entry.
 */
static void frame_rule(Dwarf_Frame *fr, bool signalp, struct rule *r,
		       int *plt_thr)
{
	static const struct rule unknown = { SPULSE_UT_UNKNOWN, 0, 0 };
	Dwarf_Op mem[3], *ops;
	size_t n;
	int64_t off, bp;
	unsigned reg;
	int thr;

	*plt_thr = -1;
	*r = unknown;
	if (signalp) {
		r->kind = SPULSE_UT_SIGNAL;
		return;
	}
	/* Return address: undefined = outermost frame, else CFA - 8. */
	if (dwarf_frame_register(fr, REG_RA, mem, &ops, &n) < 0)
		return;
	if (n == 0 && ops == mem) {
		r->kind = SPULSE_UT_END;
		return;
	}
	if (!is_cfa_offset(ops, n, &off) || off != -8)
		return;

	/* The caller's BP: unchanged, or saved at CFA + n. */
	if (dwarf_frame_register(fr, REG_RBP, mem, &ops, &n) < 0)
		return;
	if (n == 0)
		bp = 0;		/* same value or undefined */
	else if (is_cfa_offset(ops, n, &bp)) {
		if (bp >= 0 || bp < -2048 || bp % 8)
			return;
	} else if (n == 2 && ops[0].atom == DW_OP_call_frame_cfa &&
		   op_breg(&ops[1], &reg, &off) && reg == REG_RBP && off == 0) {
		bp = 1;		/* at *(BP): only valid with CFA_DEREF_BP */
	} else {
		return;
	}

	if (dwarf_frame_cfa(fr, &ops, &n) < 0 || n == 0)
		return;
	if (n == 1 && op_breg(&ops[0], &reg, &off) && fits32(off) &&
	    (reg == REG_RSP || reg == REG_RBP) && bp != 1) {
		r->kind = reg == REG_RSP ? SPULSE_UT_CFA_SP : SPULSE_UT_CFA_BP;
		r->cfa_off = (int32_t)off;
		r->bp_off = (int16_t)bp;
	} else if (n == 2 && op_breg(&ops[0], &reg, &off) && reg == REG_RBP &&
		   ops[1].atom == DW_OP_deref && fits32(off) && bp == 1) {
		r->kind = SPULSE_UT_CFA_DEREF_BP;
		r->cfa_off = (int32_t)off;
		r->bp_off = 0;
	} else if (is_plt_expr(ops, n, &off, &thr) && fits32(off) &&
		   fits32(off + 8) && bp != 1) {
		r->kind = SPULSE_UT_PLT;
		r->cfa_off = (int32_t)off;
		r->bp_off = (int16_t)bp;
		if (thr != 11)
			*plt_thr = thr;
	}
}

/* Rows for [a, end) of a PLT expression whose threshold is not 11. */
static int emit_plt_expanded(struct builder *b, uint64_t a, uint64_t end,
			     const struct rule *plt, int thr)
{
	struct rule lo = { SPULSE_UT_CFA_SP, plt->cfa_off, plt->bp_off };
	struct rule hi = { SPULSE_UT_CFA_SP, plt->cfa_off + 8, plt->bp_off };
	int rc;

	while (a < end) {
		uint64_t base = a & ~15ull, cut = base + (uint64_t)thr;
		uint64_t stop;

		if (a < cut) {
			stop = cut < end ? cut : end;
			rc = emit(b, a, &lo);
		} else {
			stop = base + 16 < end ? base + 16 : end;
			rc = emit(b, a, &hi);
		}
		if (rc)
			return rc;
		a = stop;
	}
	return 0;
}

/*
 * Look @a up in the CFI sources in order. 1 = found (@r, @end, @plt_thr
 * set), 0 = no FDE covers @a, -errno = fatal.
 */
static int probe(struct builder *b, uint64_t a, struct rule *r,
		 uint64_t *end, int *plt_thr)
{
	int i;

	for (i = 0; i < b->n_cfi; i++) {
		Dwarf_Frame *fr = NULL;
		Dwarf_Addr s, e;
		bool sig = false;

		if (dwarf_cfi_addrframe(b->cfi[i], a, &fr) != 0 || !fr)
			continue;
		if (dwarf_frame_info(fr, &s, &e, &sig) < 0) {
			free(fr);
			continue;
		}
		frame_rule(fr, sig, r, plt_thr);
		free(fr);
		*end = e > a ? e : a + 1;
		return 1;
	}
	return 0;
}

/*
 * Rows for [a, end) of a lazy .plt without an FDE whose layout
 * lazy_plt_layout() recognised: PLT0 (push GOT+8(%rip); jmp *GOT+16(%rip))
 * is entered with the entry's pushed index above the return address, CFA =
 * SP + 16, and SP + 24 after its own push at byte 6; an entry's push ends
 * at byte lazy_thr, from where CFA = SP + 16. The same rows binutils' FDE
 * gives a .plt.
 */
static int emit_lazy_plt(struct builder *b, uint64_t a, uint64_t end)
{
	static const struct rule plt0_a = { SPULSE_UT_CFA_SP, 16, 0 };
	static const struct rule plt0_b = { SPULSE_UT_CFA_SP, 24, 0 };
	static const struct rule plt = { SPULSE_UT_PLT, 8, 0 };
	uint64_t s = b->lazy[0];
	int rc;

	while (a < end && a < s + 16) {
		uint64_t stop = a < s + 6 ? s + 6 : s + 16;

		rc = emit(b, a, a < s + 6 ? &plt0_a : &plt0_b);
		if (rc)
			return rc;
		a = stop < end ? stop : end;
	}
	if (a >= end)
		return 0;
	if (b->lazy_thr == 11)
		return emit(b, a, &plt);
	return emit_plt_expanded(b, a, end, &plt, b->lazy_thr);
}

/*
 * A range no FDE covers: NONE, except inside .plt.sec or .plt.got, whose
 * entries (`endbr64; bnd jmp *x(%rip)`, `jmp *x(%rip)`) never touch the
 * stack: CFA = SP + 8 at every byte, and inside a lazy .plt of a known
 * layout (emit_lazy_plt). Clips *@end at those sections' edges.
 */
static int emit_gap(struct builder *b, uint64_t a, uint64_t *end)
{
	static const struct rule none = { SPULSE_UT_NONE, 0, 0 };
	static const struct rule stub = { SPULSE_UT_CFA_SP, 8, 0 };
	const struct rule *r = &none;
	bool lazy = false;
	size_t k;

	for (k = 0; k < 3; k++) {
		uint64_t s = k < 2 ? b->plt[k][0] : b->lazy[0];
		uint64_t e = k < 2 ? b->plt[k][1] : b->lazy[1];

		if (s >= e)
			continue;
		if (a >= s && a < e) {
			r = &stub;
			lazy = k == 2;
			if (e < *end)
				*end = e;
		} else if (s > a && s < *end) {
			*end = s;
		}
	}
	if (lazy)
		return emit_lazy_plt(b, a, *end);
	return emit(b, a, r);
}

/*
 * Walk [lo, hi) row by row: rows libdw gives, NONE where no FDE covers an
 * address (up to the next FDE start), UNKNOWN where an FDE is present but
 * unusable or too costly.
 */
static int walk(struct builder *b)
{
	static const struct rule unknown = { SPULSE_UT_UNKNOWN, 0, 0 };
	uint64_t a = b->t->lo, hi = b->t->hi;
	int rc;

	b->cur_span = SIZE_MAX;
	while (a < hi) {
		size_t si = span_floor(b, a);
		const struct span *sp = si == SIZE_MAX ? NULL : &b->spans[si];
		bool inside = sp && a < sp->end;
		uint64_t end, cost = inside ? sp->cost : 64;
		struct rule r;
		int thr;

		if (inside) {
			if (si != b->cur_span) {
				b->cur_span = si;
				b->cur_work = 0;
			}
			b->cur_work += cost;
			if (b->cur_work > SPAN_WORK_MAX) {
				/* Too many rows in one FDE: the rest is UNKNOWN. */
				rc = emit(b, a, &unknown);
				if (rc)
					return rc;
				a = sp->end < hi ? sp->end : hi;
				continue;
			}
		}
		b->work += cost;
		if (b->work > b->work_max)
			return sut_err(b->err, b->errlen, -E2BIG,
				       "%s: CFI too costly to compile (work bound %" PRIu64 ")",
				       b->path, b->work_max);
		rc = probe(b, a, &r, &end, &thr);
		if (rc < 0)
			return rc;
		if (rc == 1) {
			/* An FDE libdw found but the range list lacks (one it
			 * could decode and we could not): charge what such a
			 * lookup may cost, all the CFI, so that no input can
			 * make these probes unbounded. */
			if (!inside)
				b->work += b->cfi_bytes;
			if (end > hi)
				end = hi;
			if (thr >= 0)
				rc = emit_plt_expanded(b, a, end, &r, thr);
			else
				rc = emit(b, a, &r);
			if (rc)
				return rc;
			a = end;
			continue;
		}
		if (inside) {
			/* An FDE says it covers @a but libdw refuses it. */
			rc = emit(b, a, &unknown);
			end = sp->end;
		} else {
			/* A gap: NONE up to the next FDE start (spans after
			 * si all start above a), or CFA_SP 8 in a PLT section. */
			end = si + 1 < b->n_spans ? b->spans[si + 1].start : hi;
			if (si == SIZE_MAX)
				end = b->n_spans ? b->spans[0].start : hi;
			rc = emit_gap(b, a, &end);
		}
		if (rc)
			return rc;
		a = end < hi ? end : hi;
	}
	return 0;
}

/* ---- the ELF file ------------------------------------------------------- */

static int read_loads(struct builder *b, Elf *elf)
{
	struct sut_table *t = b->t;
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t n, i;

	if (elf_getphdrnum(elf, &n) < 0)
		return sut_err(b->err, b->errlen, -ENOEXEC,
			       "%s: no program headers", b->path);
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (t->n_loads < SUT_LOADS_MAX) {
			struct sut_load *l = &t->loads[t->n_loads++];

			l->offset = ph.p_offset;
			l->vaddr = ph.p_vaddr;
			l->filesz = ph.p_filesz;
			l->flags = ph.p_flags;
		}
		if (!(ph.p_flags & PF_X) || !ph.p_memsz)
			continue;
		if (ph.p_vaddr + ph.p_memsz < ph.p_vaddr)
			return sut_err(b->err, b->errlen, -ENOEXEC,
				       "%s: PT_LOAD wraps around", b->path);
		if (ph.p_vaddr < lo)
			lo = ph.p_vaddr;
		if (ph.p_vaddr + ph.p_memsz > hi)
			hi = ph.p_vaddr + ph.p_memsz;
	}
	if (lo >= hi)
		return sut_err(b->err, b->errlen, -ENOEXEC,
			       "%s: no executable PT_LOAD segment", b->path);
	if (hi - lo >= (1ull << 32))
		return sut_err(b->err, b->errlen, -E2BIG,
			       "%s: executable range of 4 GiB or more", b->path);
	t->lo = lo;
	t->hi = hi;
	return 0;
}

static int check_elf(struct builder *b, Elf *elf)
{
	GElf_Ehdr eh;

	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return sut_err(b->err, b->errlen, -ENOEXEC, "%s: not an ELF file",
			       b->path);
	if (!gelf_getehdr(elf, &eh) || gelf_getclass(elf) != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != EM_X86_64)
		return sut_err(b->err, b->errlen, -ENOEXEC,
			       "%s: not an x86-64 ELF file", b->path);
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
		return sut_err(b->err, b->errlen, -ENOEXEC,
			       "%s: not an executable or shared object", b->path);
	return 0;
}

static void read_build_id(struct sut_table *t, Elf *elf)
{
	const void *id;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &id);

	t->build_id_len = 0;
	if (n > 0 && n <= SPULSE_UT_BUILD_ID_MAX) {
		memcpy(t->build_id, id, (size_t)n);
		t->build_id_len = (uint32_t)n;
	}
}

int sut_file_build_id(const char *path, uint8_t id[SPULSE_UT_BUILD_ID_MAX],
		      size_t *len, char *err, size_t errlen)
{
	struct sut_table t = { 0 };
	struct builder b = { .path = path, .err = err, .errlen = errlen, .t = &t };
	Elf *elf;
	int fd, rc;

	*len = 0;
	fd = sut_open_regular(path, err, errlen);
	if (fd < 0)
		return fd;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	rc = check_elf(&b, elf);
	if (!rc) {
		read_build_id(&t, elf);
		memcpy(id, t.build_id, t.build_id_len);
		*len = t.build_id_len;
	}
	elf_end(elf);
	close(fd);
	return rc;
}

/*
 * The byte where a lazy .plt entry's `push $n` ends, when every entry has
 * one layout binutils writes, else 0: `jmp *x(%rip); push; jmp` (11),
 * `endbr64; push; [bnd] jmp` (9, IBT), `push; bnd jmp` (5, MPX). PLT0 must
 * be `push x(%rip); [bnd] jmp *x(%rip)`.
 */
static int lazy_plt_layout(const uint8_t *p, size_t n)
{
	static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	int thr = 0;
	size_t i;

	if (n < 32 || n % 16 || p[0] != 0xff || p[1] != 0x35)
		return 0;
	if (!(p[6] == 0xff && p[7] == 0x25) &&
	    !(p[6] == 0xf2 && p[7] == 0xff && p[8] == 0x25))
		return 0;
	for (i = 16; i < n; i += 16) {
		const uint8_t *e = p + i;
		int t;

		if (e[0] == 0xff && e[1] == 0x25 && e[6] == 0x68 &&
		    (e[11] == 0xe9 || (e[11] == 0xf2 && e[12] == 0xe9)))
			t = 11;
		else if (!memcmp(e, endbr64, 4) && e[4] == 0x68 &&
			 (e[9] == 0xe9 || (e[9] == 0xf2 && e[10] == 0xe9)))
			t = 9;
		else if (e[0] == 0x68 && e[5] == 0xf2 && e[6] == 0xe9)
			t = 5;
		else
			return 0;
		if (thr && t != thr)
			return 0;
		thr = t;
	}
	return thr;
}

/* The ranges of .plt.sec, .plt.got and .plt, for FDE-less PLT stubs. */
static void plt_sections(struct builder *b, Elf *elf)
{
	static const char *const names[2] = { ".plt.sec", ".plt.got" };
	Elf_Scn *scn;
	GElf_Shdr sh;
	size_t k;

	for (k = 0; k < 2; k++) {
		scn = find_section(elf, names[k]);
		if (scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR) &&
		    sh.sh_addr + sh.sh_size > sh.sh_addr) {
			b->plt[k][0] = sh.sh_addr;
			b->plt[k][1] = sh.sh_addr + sh.sh_size;
		}
	}
	scn = find_section(elf, ".plt");
	if (scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR) &&
	    sh.sh_type == SHT_PROGBITS && sh.sh_addr + sh.sh_size > sh.sh_addr) {
		Elf_Data *d = elf_getdata(scn, NULL);

		if (d && d->d_buf && d->d_size == sh.sh_size)
			b->lazy_thr = lazy_plt_layout(d->d_buf, d->d_size);
		if (b->lazy_thr) {
			b->lazy[0] = sh.sh_addr;
			b->lazy[1] = sh.sh_addr + sh.sh_size;
		}
	}
}

/* A separate debug file (by build-id) holding .debug_frame, if any. */
struct debug_file {
	int fd;
	Elf *elf;
	Dwarf *dw;
};

static void open_debug_file(struct builder *b, const struct sut_build_opts *o,
			    struct debug_file *df)
{
	const char *dir = DEFAULT_DEBUG_DIR;
	char path[4096], hex[2 * SPULSE_UT_BUILD_ID_MAX + 1];
	const struct sut_table *t = b->t;
	uint32_t i;
	int fd;

	df->fd = -1;
	if (t->build_id_len < 2)
		return;
	if (o && o->sz >= offsetof(struct sut_build_opts, debug_dir) + sizeof(o->debug_dir) &&
	    o->debug_dir)
		dir = o->debug_dir;
	for (i = 0; i < t->build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", t->build_id[i]);
	snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", dir, hex,
		 hex + 2);
	fd = sut_open_regular(path, NULL, 0);
#ifdef SUT_HAVE_DEBUGINFOD
	if (fd < 0 && o &&
	    o->sz >= offsetof(struct sut_build_opts, use_debuginfod) + sizeof(bool) &&
	    o->use_debuginfod && getenv("DEBUGINFOD_URLS")) {
		debuginfod_client *c = debuginfod_begin();

		if (c) {
			fd = debuginfod_find_debuginfo(c, t->build_id,
						       (int)t->build_id_len, NULL);
			debuginfod_end(c);
			if (fd < 0)
				fd = -1;
		}
	}
#endif
	if (fd < 0)
		return;
	df->fd = fd;
	df->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (df->elf)
		df->dw = dwarf_begin_elf(df->elf, DWARF_C_READ, NULL);
}

static void close_debug_file(struct debug_file *df)
{
	if (df->dw)
		dwarf_end(df->dw);
	if (df->elf)
		elf_end(df->elf);
	if (df->fd >= 0)
		close(df->fd);
}

/* .debug_frame of @dw, with its spans; decompressed by libdw already. */
static int add_debug_frame(struct builder *b, Dwarf *dw, Elf *elf)
{
	Dwarf_CFI *c;
	Elf_Scn *scn;

	if (!dw)
		return 0;
	c = dwarf_getcfi(dw);
	if (!c)
		return 0;
	scn = find_section(elf, ".debug_frame");
	if (scn) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED))
			elf_compress(scn, 0, 0);
		int rc = collect_spans(b, elf, scn, false);

		if (rc)
			return rc;
	}
	b->cfi[b->n_cfi++] = c;
	return 0;
}

/* Build the table of an open ELF into b->t (which the caller frees). */
static int build_elf(struct builder *b, Elf *elf, const struct sut_build_opts *o)
{
	struct debug_file df = { .fd = -1 };
	Dwarf_CFI *eh_cfi = NULL;
	Dwarf *own_dw = NULL;
	Elf_Scn *scn;
	const char *bad;
	uint64_t span_bytes = 0;
	size_t i;
	int rc;

	rc = check_elf(b, elf);
	if (rc)
		return rc;
	read_build_id(b->t, elf);
	rc = read_loads(b, elf);
	if (rc)
		return rc;

	/* .eh_frame first, then .debug_frame (own, or the debug file's). */
	scn = find_section(elf, ".eh_frame");
	if (scn) {
		eh_cfi = dwarf_getcfi_elf(elf);
		if (eh_cfi) {
			rc = collect_spans(b, elf, scn, true);
			if (rc)
				goto out;
			b->cfi[b->n_cfi++] = eh_cfi;
		}
	}
	if (find_section(elf, ".debug_frame")) {
		own_dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
		rc = add_debug_frame(b, own_dw, elf);
		if (rc)
			goto out;
	} else {
		open_debug_file(b, o, &df);
		if (df.elf && find_section(df.elf, ".debug_frame")) {
			rc = add_debug_frame(b, df.dw, df.elf);
			if (rc)
				goto out;
		}
	}
	if (!b->n_cfi) {
		rc = sut_err(b->err, b->errlen, -ENOEXEC,
			     "%s: no .eh_frame or .debug_frame", b->path);
		goto out;
	}
	plt_sections(b, elf);
	if (b->n_spans > 1)
		qsort(b->spans, b->n_spans, sizeof(*b->spans), span_cmp);
	for (i = 0; i < b->n_spans; i++)
		span_bytes += b->spans[i].cost;
	b->work_max = FILE_WORK_BASE + FILE_WORK_PER_BYTE * span_bytes;

	rc = walk(b);
	if (rc)
		goto out;
	if (b->t->n_rows < b->rows_cap) {	/* drop the growth slack */
		void *p = realloc(b->t->rows, b->t->n_rows * sizeof(*b->t->rows));

		if (p)
			b->t->rows = p;
	}
	bad = sut_rows_invalid(b->t->rows, b->t->n_rows, b->t->lo, b->t->hi);
	if (bad)
		rc = sut_err(b->err, b->errlen, -EINVAL,
			     "%s: built table invalid: %s", b->path, bad);
out:
	free(b->spans);
	b->spans = NULL;
	if (eh_cfi)
		dwarf_cfi_end(eh_cfi);
	if (own_dw)
		dwarf_end(own_dw);
	close_debug_file(&df);
	return rc;
}

int sut_build_file(const char *path, const struct sut_build_opts *o,
		   struct sut_table **out, char *err, size_t errlen)
{
	struct builder b = { .path = path, .err = err, .errlen = errlen };
	Elf *elf;
	int fd, rc;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	fd = sut_open_regular(path, err, errlen);
	if (fd < 0)
		return fd;
	b.t = calloc(1, sizeof(*b.t));
	if (!b.t) {
		close(fd);
		return sut_err(err, errlen, -ENOMEM, "%s: out of memory", path);
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	rc = build_elf(&b, elf, o);
	if (elf)
		elf_end(elf);
	close(fd);
	if (!rc) {
		*out = b.t;
		b.t = NULL;
	}
	sut_table_free(b.t);
	if (rc && err && errlen && !err[0])
		sut_err(err, errlen, rc, "%s: %s", path, strerror(-rc));
	return rc;
}

int sut_build_image(const void *image, size_t len, const char *name,
		    const struct sut_build_opts *o, struct sut_table **out,
		    char *err, size_t errlen)
{
	struct builder b = { .path = name ? name : "(image)", .err = err,
			     .errlen = errlen };
	char *copy;
	Elf *elf;
	int rc;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (!image || !len)
		return sut_err(err, errlen, -ENOEXEC, "%s: not an ELF file", b.path);
	copy = malloc(len);
	b.t = calloc(1, sizeof(*b.t));
	if (!copy || !b.t) {
		free(copy);
		free(b.t);
		return sut_err(err, errlen, -ENOMEM, "%s: out of memory", b.path);
	}
	memcpy(copy, image, len);
	elf_version(EV_CURRENT);
	elf = elf_memory(copy, len);
	rc = build_elf(&b, elf, o);
	if (elf)
		elf_end(elf);
	free(copy);
	if (!rc) {
		*out = b.t;
		b.t = NULL;
	}
	sut_table_free(b.t);
	if (rc && err && errlen && !err[0])
		sut_err(err, errlen, rc, "%s: %s", b.path, strerror(-rc));
	return rc;
}
