# report / flame / diff --inline: frames expanded into their DWARF inline
# chains, on an ELF built here whose caller() inlines inl_outer() which
# inlines inl_inner(); the address is chosen with binutils' addr2line -i.

build_inline() {
	local addr off vaddr filesz load
	cat >inl.c <<'EOT'
#define INLINE static inline __attribute__((always_inline))
volatile int sink;
INLINE void inl_inner(int n) { for (int i = 0; i < n; i++) sink += i * 3; }
INLINE void inl_outer(int n) { inl_inner(n); sink ^= 1; }
__attribute__((noinline)) void caller(int n) { inl_outer(n); sink += 2; }
int main(int argc, char **argv) { (void)argv; caller(argc * 100); return 0; }
EOT
	$CC -O2 -g -no-pie -fno-pie -o inl inl.c || return 1
	# an address of caller() whose inline chain is inl_inner <- inl_outer <- caller
	addr=$(python3 - <<'PY'
import subprocess
syms = {}
for l in subprocess.run(["nm", "-S", "inl"], capture_output=True, text=True).stdout.splitlines():
    p = l.split()
    if len(p) == 4 and p[3] == "caller":
        start, size = int(p[0], 16), int(p[1], 16)
for a in range(start, start + size):
    out = subprocess.run(["addr2line", "-f", "-i", "-e", "inl", hex(a)],
                         capture_output=True, text=True).stdout.split("\n")
    if out[0::2][:3] == ["inl_inner", "inl_outer", "caller"]:
        print(hex(a)); break
PY
)
	[ -n "$addr" ] || die "no inlined address found in caller()" || return 1
	echo "$addr" >inl.addr
	load=$(readelf -lW inl | awk '$1 == "LOAD" && / R?W?E / {print $2, $3, $5; exit}')
	read -r off vaddr filesz <<<"$load"
	cat >inl.txt <<EOT
# header start_us=1000000 interval_us=1000
module id=0 pid=5 start=0x400000 end=$(printf '0x%x' $((0x400000 + filesz))) file_offset=$off path=$WORK/inl build_id=
thread id=0 pid=5 tid=5 comm=inl
frame id=0 kind=module module=0 rel=$(printf '0x%x' $((addr - vaddr + off)))
stack id=0 parent=root frame=0
EOT
	for i in 1 2 3; do echo "sample dt_ns=1000 thread=0 stack=0"; done >>inl.txt
	"$SPOOLGEN" <inl.txt >inl.spulse
}

test_flame_inline_expands_chain_outermost_first() {
	build_inline || return 1
	expect_rc 0 "$SP" flame inl.spulse --folded || return 1
	[ "$(cat out)" = "caller 3" ] || die "without --inline: $(cat out)" ||
		return 1
	expect_rc 0 "$SP" flame inl.spulse --folded --inline || return 1
	[ "$(cat out)" = "caller;inl_outer;inl_inner 3" ] ||
		die "--inline: $(cat out)"
}

test_report_inline_rows_for_inlined_functions() {
	build_inline || return 1
	expect_rc 0 "$SP" report inl.spulse --inline --json --top 0 || return 1
	json_check out 'sorted((r["function"], r["self"], r["total"]) for r in j["rows"]) == [("caller", 0, 3), ("inl_inner", 3, 3), ("inl_outer", 0, 3)]' ||
		die "rows: $(cat out)" || return 1
	# srcline of the innermost entry is the address's line (addr2line's
	# first line), the outer entries their call sites
	expect_rc 0 "$SP" report inl.spulse --inline --sort srcline,sym --json ||
		return 1
	addr2line -i -e inl "$(cat inl.addr)" >lines
	python3 - <<'PY' || die "inline srclines: $(cat out) vs $(cat lines)"
import json
rows = {r["function"]: r["srcline"] for r in json.load(open("out"))["rows"]}
lines = [l.split(" (")[0].strip() for l in open("lines")]
assert rows["inl_inner"] == lines[0], (rows, lines)
assert rows["inl_outer"] == lines[1], (rows, lines)
assert rows["caller"] == lines[2], (rows, lines)
PY
}

test_report_inline_call_graph_and_diff() {
	build_inline || return 1
	expect_rc 0 "$SP" report inl.spulse --inline -g callee --top 1 || return 1
	grep -q -- '---inl_inner$' out && grep -q '^               inl_outer$' out &&
		grep -q '^               caller$' out || die "graph: $(cat out)" ||
		return 1
	expect_rc 0 "$SP" diff inl.spulse inl.spulse --inline --json --top 0 ||
		return 1
	json_check out 'len(j["rows"]) == 3' \
		'all(r["delta_self_pct"] == 0 for r in j["rows"])' || die "diff: $(cat out)"
}
