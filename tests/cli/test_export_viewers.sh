# export --format speedscope and --format perf-script loaded by a real
# client: speedscope 1.25.0 (npm package; its importer lives only inside
# the minified browser bundle, dist/release/speedscope-*.js, with no
# module to require from node, so it runs in headless Chromium as
# test_offcpu_viewer.sh does, through speedscope_threads defined there).
# Needs chromium and $SPEEDSCOPE_DIR (make cli-speedscope).

# merged_spool: build_known's definitions with samples written as two
# per-CPU batches, so thread "known" (pid 100) goes back in time in stream
# order (30, 40 ms on CPU 0, then 10, 20 ms on CPU 1) while "other" stays
# in order (5, 45 ms).
merged_spool() {
	build_known || return 1
	grep -v '^sample' known.txt >m.txt
	cat >>m.txt <<'EOT'
cpu cpu=0
sample t=30000000 thread=0 stack=2
sample t=40000000 thread=0 stack=1
cpu cpu=1
sample t=5000000 thread=1 stack=5
sample t=10000000 thread=0 stack=2
sample t=20000000 thread=0 stack=2
sample t=45000000 thread=1 stack=4
EOT
	"$SPOOLGEN" <m.txt >m.spulse && cp known.spulse.kallsyms m.spulse.kallsyms
}

# the perf-script tests that need no viewer
test_perf_script_is_time_ordered_with_period_and_cpu() {
	merged_spool || return 1
	expect_rc 0 "$SP" export m.spulse --format perf-script -o ps.txt || return 1
	grep 'cpu-clock:$' ps.txt | awk '{print $1, $3, $4}' >got
	cat >want <<'EOT'
other [001] 1.005000:
known [001] 1.010000:
known [001] 1.020000:
known [000] 1.030000:
known [000] 1.040000:
other [001] 1.045000:
EOT
	diff want got || die "not in time order" || return 1
	# the real period: interval_us 1000 -> 1000000 ns
	[ "$(grep -c ': 1000000 cpu-clock:$' ps.txt)" -eq 6 ] ||
		die "period: $(head -1 ps.txt)" || return 1
	# leaf first, kernel frame named through FILE.kallsyms
	sed -n 2p ps.txt | grep -q 'known_kernel_fn+0x23 (\[kernel.kallsyms\])' ||
		die "leaf: $(sed -n 2p ps.txt)"
}

test_perf_script_equal_times_keep_stream_order() {
	build_known || return 1
	grep -v '^sample' known.txt >e.txt
	# three threads' samples at the same instant, then one earlier
	cat >>e.txt <<'EOT'
thread id=2 pid=300 tid=300 comm=third
sample t=7000 thread=1 stack=5
sample t=7000 thread=0 stack=2
sample t=7000 thread=2 stack=1
sample t=3000 thread=2 stack=1
EOT
	"$SPOOLGEN" <e.txt >e.spulse || return 1
	expect_rc 0 "$SP" export e.spulse --format perf-script || return 1
	[ "$(grep 'cpu-clock:$' out | awk '{print $1}' | tr '\n' ' ')" = \
		"third other known third " ] || die "order: $(grep cpu-clock out)"
}

test_json_frame_table_and_utf8() {
	build_known || return 1
	sed -i 's/comm=known$/comm=caf\\xc3\\xa9\\xff/' known.txt
	"$SPOOLGEN" <known.txt >known.spulse || return 1
	expect_rc 0 "$SP" export known.spulse --format json -o j.json || return 1
	python3 - "$WORK" <<'EOF' || die "json checks failed" || return 1
import json, sys
raw = open("j.json", "rb").read()
j = json.loads(raw.decode("utf-8"))          # strict UTF-8, one value
assert "café".encode() in raw, "café not passed through as UTF-8"
assert b"\\u00ff" in raw, "invalid byte not escaped as \\u00ff"
assert j["threads"][0]["comm"] == "caf\u00e9\u00ff", j["threads"][0]
assert j["period_ns"] == 1000000 and j["samples_written"] == 16
fr = j["frames"]
assert [f["id"] for f in fr] == list(range(len(fr))) and len(fr) == 6
names = [f["name"] for f in fr]
assert len(set((f["name"], f["dso"], f["addr"]) for f in fr)) == len(fr), "a frame repeats"
assert fr[2]["function"] == "known_alpha_leaf" and fr[2]["offset"] == 4
assert fr[2]["dso"] == sys.argv[1] + "/known" and fr[2]["kind"] == "module"
assert fr[3]["kind"] == "truncated" and fr[5]["name"] == "known_kernel_fn"
s = j["samples"]
assert len(s) == 16
# first sample: 1000 ns after the start, alpha <- beta <- gamma, leaf first
assert s[0] == {"time_ns": 1000, "thread": 0, "stack": [2, 1, 0]}, s[0]
assert [names[i] for i in s[15]["stack"]] == ["known_kernel_fn", "known_beta_mid", "known_gamma_root"]
# referring, not repeating: far smaller than frames written per sample
per = len(raw) / 16
assert per < 200, per
EOF
	expect_rc 0 "$SP" export known.spulse --format json --pid 200 -o p.json ||
		return 1
	python3 -c 'import json; j = json.load(open("p.json")); assert j["samples_written"] == 6' ||
		die "--pid"
}

test_speedscope_file_shape() {
	merged_spool || return 1
	expect_rc 0 "$SP" export m.spulse --format speedscope -o m.json || return 1
	python3 - <<'EOF' || die "speedscope shape" || return 1
import json
j = json.load(open("m.json"))
assert j["$schema"] == "https://www.speedscope.app/file-format-schema.json"
names = [f["name"] for f in j["shared"]["frames"]]
assert len(names) == len(set((f["name"], f.get("file"), f.get("line")) for f in j["shared"]["frames"]))
p = {x["name"]: x for x in j["profiles"]}
assert sorted(p) == ["known 100/100", "other 200/201"], sorted(p)
k = p["known 100/100"]
assert k["type"] == "sampled" and k["unit"] == "nanoseconds"
# time order 10, 20, 30 ms (alpha), 40 ms (beta): alpha x3 merged, then beta
st = [[names[i] for i in s] for s in k["samples"]]
assert st == [["known_gamma_root", "known_beta_mid", "known_alpha_leaf"],
              ["known_gamma_root", "known_beta_mid"]], st
assert k["weights"] == [3000000, 1000000] and k["endValue"] == 4000000
o = p["other 200/201"]
assert [names[s[-1]] for s in o["samples"]] == ["known_kernel_fn", "0x1234 [/nonexistent/libgone.so]"]
EOF
}

SPEEDSCOPE_DIR=${SPEEDSCOPE_DIR:-$BUILD/tests/cli/speedscope/package}
if command -v chromium >/dev/null &&
	[ -f "$SPEEDSCOPE_DIR/dist/release/index.html" ]; then

test_speedscope_imports_speedscope_export() {
	merged_spool || return 1
	expect_rc 0 "$SP" export m.spulse --format speedscope -o m.json || return 1
	speedscope_threads m.json >got || die "chromium failed" || return 1
	sort got >s
	cat >want <<'EOT'
known 100/100|4.00ms
other 200/201|2.00ms
title|m.spulse - speedscope
EOT
	diff want s || die "speedscope's view differs"
}

test_speedscope_imports_perf_script_and_rejects_backwards_time() {
	merged_spool || return 1
	expect_rc 0 "$SP" export m.spulse --format perf-script -o ps.txt || return 1
	speedscope_threads ps.txt >got || die "chromium failed" || return 1
	sort got >s
	# speedscope's perf importer weighs samples by timestamps: 10..40 ms
	# and 5..45 ms
	cat >want <<'EOT'
known pid: 100 tid: 100|30.00ms
other pid: 200 tid: 201|40.00ms
title|ps.txt - speedscope
EOT
	diff want s || die "speedscope's view of perf-script differs" || return 1
	# the same events in stream order (what an unsorted export wrote):
	# "known" goes 30, 40, 10 ms and speedscope rejects the whole file
	awk 'BEGIN {RS = ""; ORS = "\n\n"} {b[NR] = $0}
	     END {split("4 5 1 2 3 6", o, " "); for (i = 1; i <= 6; i++) print b[o[i]]}' \
		ps.txt >stream.txt
	speedscope_threads stream.txt >got || die "chromium failed" || return 1
	! grep -q 'pid: 100' got || die "backwards times accepted: $(cat got)" ||
		return 1
	grep -q 'Something went wrong' dom.html || die "no import error shown"
}

else
	echo "note: speedscope import tests not run (needs chromium and $SPEEDSCOPE_DIR; make cli-speedscope)" >&2
fi

# FlameGraph's stackcollapse-perf.pl (not packaged by Debian 12 or npm):
# run when STACKCOLLAPSE_PERF names a copy of the script.
if [ -n "${STACKCOLLAPSE_PERF:-}" ] && [ -f "$STACKCOLLAPSE_PERF" ] &&
	command -v perl >/dev/null; then
test_stackcollapse_perf_reads_perf_script() {
	merged_spool || return 1
	expect_rc 0 "$SP" export m.spulse --format perf-script -o ps.txt || return 1
	perl "$STACKCOLLAPSE_PERF" ps.txt | sort >got || return 1
	# weights are the period (1 ms = 1000000 ns) per sample
	cat >want <<'EOT'
known;known_gamma_root;known_beta_mid 1000000
known;known_gamma_root;known_beta_mid;known_alpha_leaf 3000000
other;[[truncated]];[libgone.so] 1000000
other;known_gamma_root;known_beta_mid;known_kernel_fn 1000000
EOT
	diff want got || die "stackcollapse-perf.pl output differs"
}
fi


# export_build_inline: inl.c (an always_inline function inside a noinline one),
# -O2 -g, and i.spulse with two samples at an address that addr2line -i
# reports as inl_inner inlined into inl_outer; INL_LINES gets addr2line's
# "FILE:LINE FILE:LINE" for it, innermost first.
export_build_inline() {
	local s z o a n load off vaddr rel
	cat >inl.c <<'EOC'
volatile int sink;
static inline __attribute__((always_inline)) void inl_inner(int n)
{
	for (int i = 0; i < n; i++)
		sink += i * 3;
}
__attribute__((noinline)) void inl_outer(int n)
{
	sink++;
	inl_inner(n);
	sink--;
}
int main(void) { inl_outer(10); return 0; }
EOC
	$CC -O2 -g -no-pie -fno-pie -o inl inl.c || return 1
	read -r s z <<<"$(nm -S inl | awk '$4 == "inl_outer" {print $1, $2}')"
	INL_ADDR=
	for o in $(seq 0 $((0x$z - 1))); do
		a=$(printf '0x%x' $((0x$s + o)))
		n=$(addr2line -i -f -e inl "$a" | awk 'NR % 2 == 1' | tr '\n' ' ')
		[ "$n" = "inl_inner inl_outer " ] && INL_ADDR=$a && break
	done
	[ -n "$INL_ADDR" ] || die "no inlined address in inl_outer" || return 1
	INL_LINES=$(addr2line -i -e inl "$INL_ADDR" | sed 's/ .*//' | tr '\n' ' ')
	load=$(readelf -lW inl | awk '$1 == "LOAD" && / R?W?E / {print $2, $3; exit}')
	read -r off vaddr <<<"$load"
	rel=$(printf '0x%x' $((INL_ADDR - vaddr + off)))
	cat >i.txt <<EOT
# header start_us=1000000 interval_us=1000
module id=0 pid=1 start=0x400000 end=0x500000 file_offset=0x0 path=$WORK/inl build_id=
thread id=0 pid=1 tid=1 comm=inl
frame id=0 kind=module module=0 rel=$rel
stack id=0 parent=root frame=0
sample dt_ns=1000 thread=0 stack=0
sample dt_ns=1000 thread=0 stack=0
EOT
	"$SPOOLGEN" <i.txt >i.spulse
}

test_export_inline_chains_json_speedscope_perf_script() {
	export_build_inline || return 1
	# shellcheck disable=SC2086
	expect_rc 0 "$SP" export i.spulse --format json --inline -o j.json || return 1
	# shellcheck disable=SC2086
	python3 - $INL_LINES <<'PY' || die "json inline: $(cat j.json)" || return 1
import json, sys
inner = sys.argv[1]
f = json.load(open("j.json"))["frames"][0]
assert f["function"] == "inl_outer", f
assert [i["function"] for i in f["inline"]] == ["inl_inner"], f
assert "%s:%d" % (f["inline"][0]["file"], f["inline"][0]["line"]) == inner, (f, inner)
PY
	expect_rc 0 "$SP" export i.spulse --format json -o n.json || return 1
	python3 -c 'import json; assert "inline" not in json.load(open("n.json"))["frames"][0]' ||
		die "inline without --inline" || return 1
	expect_rc 0 "$SP" export i.spulse --format speedscope --inline -o s.json ||
		return 1
	python3 - <<'PY' || die "speedscope inline: $(cat s.json)" || return 1
import json
j = json.load(open("s.json"))
names = [f["name"] for f in j["shared"]["frames"]]
p = j["profiles"][0]
# root first: the caller, then the function inlined into it
assert [names[i] for i in p["samples"][0]] == ["inl_outer", "inl_inner"], p
assert p["weights"] == [2000000]
PY
	expect_rc 0 "$SP" export i.spulse --format perf-script --inline || return 1
	sed -n 2,3p out | awk '{print $2}' | tr '\n' ' ' |
		grep -Eqx 'inl_inner inl_outer\+0x[0-9a-f]+ ' ||
		die "perf-script inline lines: $(sed -n 1,3p out)"
}

# 2000 samples written as per-CPU batches of 50 whose time ranges overlap
# (each batch starts 30 ms after the previous one and spans 49 ms, two
# threads and CPUs in turn), so the stream goes back in time at every
# batch: perf-script must come out sorted by time with every sample
test_perf_script_batches_sorted_and_complete() {
	build_known || return 1
	grep -v '^sample' known.txt >b.txt
	awk 'BEGIN {for (b = 0; b < 40; b++) {
		printf "cpu cpu=%d\n", b % 2
		for (i = 0; i < 50; i++)
			printf "sample t=%d thread=%d stack=%d\n",
				b * 30000000 + i * 1000000, b % 2, b % 2 ? 5 : 2 }}' >>b.txt
	"$SPOOLGEN" <b.txt >b.spulse || return 1
	expect_rc 0 "$SP" export b.spulse --format perf-script -o ps.txt || return 1
	awk '/cpu-clock:$/ {n++; t = $(NF - 2); sub(":", "", t);
		if (t + 0 < last + 0) {print "back at line " NR; exit 1} last = t}
		END {print n}' ps.txt >n || die "perf-script not sorted: $(cat n)" ||
		return 1
	[ "$(cat n)" -eq 2000 ] || die "$(cat n) samples of 2000" || return 1
	# each thread's own samples keep their order too
	[ "$(grep -c '^known 100/100 \[000\]' ps.txt)" -eq 1000 ] ||
		die "thread 100 on CPU 0"
}
