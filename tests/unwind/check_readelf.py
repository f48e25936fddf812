#!/usr/bin/env python3
"""Compare `spulse unwind show FILE` rows with binutils' own CFI decoder.

readelf -wF (the decoded CFI table) and readelf -wf (the raw instructions,
for the expressions) are independent of elfutils libdw, which the table
builder uses. From them this script derives, for every address in the
table's range, the rule the table must hold (docs/UNWIND.md, "How tables
are built"), and checks the table at the start of every readelf row, every
gap between FDEs and every table row: both piecewise-constant functions
agree on every piece of their common refinement.

usage: check_readelf.py SPULSE FILE [--quiet] [--readelf-file F] [--debug-dir D]
  --readelf-file F  decode the CFI of F (e.g. the unstripped original of a
                    stripped FILE whose CFI is in a separate debug file)
  --debug-dir D     passed to spulse unwind show
Prints one summary line; exit 0 when every check point agrees, 1 if not.
"""
import bisect
import os
import re
import subprocess
import sys

PLT_EXPR = re.compile(
    r"^DW_OP_breg7 \(rsp\): (-?\d+); DW_OP_breg16 \(rip\): 0; DW_OP_lit15; "
    r"DW_OP_and; DW_OP_lit(\d+); DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus$")
DRAP_EXPR = re.compile(r"^DW_OP_breg6 \(rbp\): (-?\d+); DW_OP_deref$")
BP_AT_BP = "DW_OP_breg6 (rbp): 0"
HEX = re.compile(r"^[0-9a-f]{8,16} ")


def run(cmd):
    env = dict(os.environ, LC_ALL="C")
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=env, check=False)
    return p.returncode, p.stdout.decode("utf-8", "replace")


def parse_show(text):
    rows, lo, hi = [], None, None
    in_rows = False
    for line in text.splitlines():
        if line.startswith("range "):
            a, b = line.split()[1].split("..")
            lo, hi = int(a, 16), int(b, 16)
        elif line == "rows:":
            in_rows = True
        elif in_rows:
            s, e, kind, cfa, bp = line.split()
            rows.append((int(s, 16), int(e, 16), kind, int(cfa), int(bp)))
    return lo, hi, rows


def parse_wf(text):
    """Per FDE start address: its CFA expressions and rbp expressions."""
    exprs = {}
    cur = None
    for line in text.splitlines():
        m = re.search(r" FDE cie=[0-9a-f]+ pc=([0-9a-f]+)\.\.", line)
        if m:
            cur = exprs.setdefault(int(m.group(1), 16), (set(), set()))
            continue
        if " CIE " in line:
            cur = None
            continue
        if cur is None:
            continue
        m = re.search(r"DW_CFA_def_cfa_expression \((.*)\)$", line)
        if m:
            cur[0].add(m.group(1))
        m = re.search(r"DW_CFA_(?:val_)?expression: r6 \(rbp\) \((.*)\)$", line)
        if m:
            cur[1].add(m.group(1))
    return exprs


def parse_wF(text):
    """FDEs as (start, end, signal, [(loc, {col: rule})]); CIE rows too."""
    cies, fdes = {}, []
    cur, cols, cie_of = None, None, None
    for line in text.splitlines():
        m = re.match(r"^([0-9a-f]+) [0-9a-f]+ [0-9a-f]+ CIE \"([^\"]*)\"", line)
        if m:
            cur = {"aug": m.group(2), "rows": []}
            cies[int(m.group(1), 16)] = cur
            cols = None
            continue
        m = re.match(r"^[0-9a-f]+ [0-9a-f]+ [0-9a-f]+ FDE cie=([0-9a-f]+) "
                     r"pc=([0-9a-f]+)\.\.([0-9a-f]+)", line)
        if m:
            cie_of = int(m.group(1), 16)
            cur = {"cie": cie_of, "start": int(m.group(2), 16),
                   "end": int(m.group(3), 16), "rows": []}
            fdes.append(cur)
            cols = None
            continue
        if cur is None:
            continue
        s = line.split()
        if s and s[0] == "LOC":
            cols = s[1:]
            continue
        if cols and HEX.match(line):
            # "r9 (r9)" (register rule) is one value.
            vals = re.findall(r"r\d+ \([a-z0-9]+\)|\S+", line)[1:]
            if len(vals) != len(cols):
                continue
            cur["rows"].append((int(s[0], 16), dict(zip(cols, vals))))
    out = []
    for f in fdes:
        cie = cies.get(f["cie"], {"aug": "", "rows": []})
        rows = f["rows"] or [(f["start"], r) for _, r in cie["rows"][:1]]
        out.append((f["start"], f["end"], "S" in cie["aug"], rows))
    return out


def expected(rule, signal, cfa_exprs, bp_exprs, pc):
    """(kind, cfa_off, bp_off) or a set of those, plus a reason."""
    if signal:
        return ("signal", 0, 0), "signal frame"
    ra = rule.get("ra", "c-8")
    if ra == "u":
        return ("end", 0, 0), "ra undefined"
    if ra != "c-8":
        return ("unknown", 0, 0), "ra " + ra
    bp = rule.get("rbp", "u")
    bp_at_bp = False
    if bp in ("u", "s"):
        bp_off = 0
    elif re.match(r"^c-\d+$", bp):
        bp_off = int(bp[1:])
        if bp_off >= 0 or bp_off < -2048 or bp_off % 8:
            return ("unknown", 0, 0), "rbp " + bp
    elif bp == "exp" and bp_exprs == {BP_AT_BP}:
        bp_at_bp, bp_off = True, 0
    else:
        return ("unknown", 0, 0), "rbp " + bp
    cfa = rule.get("CFA", "")
    m = re.match(r"^(rsp|rbp)\+(-?\d+)$", cfa)
    if m and not bp_at_bp:
        kind = "cfa_sp" if m.group(1) == "rsp" else "cfa_bp"
        return (kind, int(m.group(2)), bp_off), None
    if cfa == "exp" and len(cfa_exprs) == 1:
        e = next(iter(cfa_exprs))
        m = PLT_EXPR.match(e)
        if m and not bp_at_bp:
            off, thr = int(m.group(1)), int(m.group(2))
            if thr == 11:
                return ("plt", off, bp_off), None
            return (("cfa_sp", off + 8 if (pc & 15) >= thr else off, bp_off),
                    None)
        m = DRAP_EXPR.match(e)
        if m and bp_at_bp:
            return ("cfa_deref_bp", int(m.group(1)), 0), None
        return ("unknown", 0, 0), "cfa exp " + e
    return ("unknown", 0, 0), "cfa " + cfa + (" rbp exp" if bp_at_bp else "")


def plt_sections(path):
    _, text = run(["readelf", "-SW", path])
    out = []
    for line in text.splitlines():
        m = re.search(r"\] (\.plt\.sec|\.plt\.got)\s+\S+\s+([0-9a-f]+) [0-9a-f]+ "
                      r"([0-9a-f]+) ", line)
        if m:
            a = int(m.group(2), 16)
            out.append((a, a + int(m.group(3), 16)))
    return out


def lazy_plt(path):
    """For a .plt, from objdump's disassembly (independent of the builder):
    (start, end, T) where each 16-byte entry's `push $n` ends at byte T, or
    None when the entries differ or PLT0 is not push/jmp."""
    _, text = run(["objdump", "-d", "-j", ".plt", "--no-show-raw-insn", path])
    insns = []
    for line in text.splitlines():
        m = re.match(r"^\s+([0-9a-f]+):\s+(.*)$", line)
        if m:
            insns.append((int(m.group(1), 16), m.group(2).strip()))
    if len(insns) < 4:
        return None
    start = insns[0][0]
    _, sec = run(["readelf", "-SW", path])
    m = re.search(r"\] \.plt\s+\S+\s+([0-9a-f]+) [0-9a-f]+ ([0-9a-f]+) ", sec)
    if not m or int(m.group(1), 16) != start:
        return None
    end = start + int(m.group(2), 16)
    if not insns[0][1].startswith("push") or "(%rip)" not in insns[0][1] or \
            insns[1][0] != start + 6:
        return None
    thr = set()
    for i, (a, ins) in enumerate(insns):
        if a >= start + 16 and re.match(r"^push\s+\$", ins) and i + 1 < len(insns):
            thr.add(insns[i + 1][0] - (a & ~15))
    if len(thr) != 1:
        return None
    return start, end, thr.pop()


def main():
    args = sys.argv[1:]
    spulse, path = args[0], args[1]
    quiet = "--quiet" in args
    show_cmd = [spulse, "unwind", "show", path]
    readelf_path = path
    for i, a in enumerate(args):
        if a == "--readelf-file":
            readelf_path = args[i + 1]
        elif a == "--debug-dir":
            show_cmd += ["--debug-dir", args[i + 1]]
    rc, show = run(show_cmd)
    if rc != 0:
        print("FAIL %s: spulse unwind show exit %d" % (path, rc))
        return 1
    lo, hi, rows = parse_show(show)
    starts = [r[0] for r in rows]
    _, wF = run(["readelf", "-wF", readelf_path])
    _, wf = run(["readelf", "-wf", readelf_path])
    exprs = parse_wf(wf)
    fdes = parse_wF(wF)
    plts = plt_sections(readelf_path)
    lazy = lazy_plt(readelf_path)
    if not fdes:
        print("FAIL %s: readelf shows no FDE" % readelf_path)
        return 1

    # Expected rule pieces: (start, end, rule-or-None, signal, fde_start).
    pieces = []
    for start, end, signal, frows in fdes:
        for i, (loc, rule) in enumerate(frows):
            e = frows[i + 1][0] if i + 1 < len(frows) else end
            if loc < e:
                pieces.append((loc, e, rule, signal, start))
    pieces.sort(key=lambda p: p[0])
    piece_starts = [p[0] for p in pieces]

    def want(pc):
        i = bisect.bisect_right(piece_starts, pc) - 1
        # The libdw lookup takes the FDE with the highest start <= pc.
        while i >= 0 and pieces[i][1] <= pc:
            if pieces[i][0] < pc and i > 0 and pieces[i - 1][1] > pc:
                i -= 1
                continue
            i = -1
        if i < 0:
            for a, b in plts:
                if a <= pc < b:
                    return ("cfa_sp", 8, 0), None
            if lazy and lazy[0] <= pc < lazy[1]:
                s, _, t = lazy
                if pc < s + 16:
                    return ("cfa_sp", 16 if pc < s + 6 else 24, 0), None
                if t == 11:
                    return ("plt", 8, 0), None
                return ("cfa_sp", 8 if (pc & 15) < t else 16, 0), None
            return ("none", 0, 0), None
        _, _, rule, signal, fstart = pieces[i]
        ce, be = exprs.get(fstart, (set(), set()))
        return expected(rule, signal, ce, be, pc)

    def have(pc):
        i = bisect.bisect_right(starts, pc) - 1
        if i < 0 or pc >= hi:
            return None
        r = rows[i]
        return (r[2], r[3], r[4])

    points = set(starts)
    for p in pieces:
        for x in (p[0], p[1]):
            if lo <= x < hi:
                points.add(x)
    if lazy:
        for x in range(lazy[0], lazy[1], 16):
            points.update((x, x + 6, x + lazy[2]))
    points = set(p for p in points if lo <= p < hi)
    bad = []
    reasons = {}
    for pc in sorted(points):
        w, why = want(pc)
        h = have(pc)
        if h != w:
            bad.append((pc, w, h))
        elif why and w[0] == "unknown":
            reasons[why] = reasons.get(why, 0) + 1
    kinds = {}
    for r in rows:
        kinds[r[2]] = kinds.get(r[2], 0) + 1
    status = "ok" if not bad else "FAIL"
    print("%s %s: %d rows, %d check points, %d disagree; unknown rows %d%s" % (
        status, path, len(rows), len(points), len(bad), kinds.get("unknown", 0),
        "" if not reasons else " (readelf: " + ", ".join(
            "%s x%d" % kv for kv in sorted(reasons.items())) + ")"))
    if not quiet:
        for pc, w, h in bad[:20]:
            print("  %#x: readelf says %s, table has %s" % (pc, w, h))
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
