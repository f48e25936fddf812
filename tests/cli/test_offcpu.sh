# Off-CPU analysis: report --off-cpu / --json, flame --off-cpu / --wakers,
# latency histograms and longest waits, export --format trace-event, on a
# spool with known intervals (build_offcpu), and old spools without any.

# build_offcpu: build_known's ELF, modules, threads and 16 samples, plus a
# worker thread, scheduler kernel frames and six intervals (times in ns):
#
#   I1 t=1ms   known/100  S  stack A  blocked 50ms  runq 0.1ms waker other/201 W
#   I2 t=60ms  known/100  S  stack A  blocked 20ms  runq 3ms   waker other/201 W
#   I3 t=100ms worker/101 D  stack B  blocked 10ms  runq 0.5ms waker other/201 W
#   I4 t=120ms known/100  R  stack C  blocked 0     runq 2ms   no waker
#   I5 t=130ms other/201  D  stack D  blocked 4ms   runq 0     no waker
#   I6 t=140ms worker/101 S  stack E  blocked 1ms   runq 0.5ms waker known/100 alpha
#
#   A = gamma;beta;alpha;futex_wait;schedule   B = gamma;beta;io_schedule
#   C = gamma;beta;schedule   D = gamma;beta;io_schedule;schedule
#   E = gamma;beta;beta;schedule (recursion)   W = gamma;beta;kfn;try_to_wake_up
build_offcpu() {
	build_known || return 1
	grep -v '^sample' known.txt >off.txt
	cat >>off.txt <<'EOT'
thread id=2 pid=100 tid=101 comm=worker
frame id=6 kind=kernel addr=0xffffffff81000310
frame id=7 kind=kernel addr=0xffffffff81000410
frame id=8 kind=kernel addr=0xffffffff81000510
frame id=9 kind=kernel addr=0xffffffff81000610
stack id=6 parent=2 frame=7
stack id=7 parent=6 frame=6
stack id=8 parent=1 frame=8
stack id=9 parent=8 frame=6
stack id=10 parent=1 frame=6
stack id=11 parent=5 frame=9
stack id=12 parent=1 frame=1
stack id=13 parent=12 frame=6
cpu cpu=0
EOT
	grep '^sample' known.txt >>off.txt
	cat >>off.txt <<'EOT'
offcpu t=1000000 thread=0 stack=7 state=S cpu_out=0 cpu_in=1 blocked_ns=50000000 runq_ns=100000 waker=1 waker_stack=11 waker_cpu=1
offcpu t=60000000 thread=0 stack=7 state=S cpu_out=1 cpu_in=1 blocked_ns=20000000 runq_ns=3000000 waker=1 waker_stack=11 waker_cpu=1
trigger t=65000000 reason=1 seq=0 text=manual
offcpu t=100000000 thread=2 stack=8 state=D cpu_out=0 cpu_in=0 blocked_ns=10000000 runq_ns=500000 waker=1 waker_stack=11 waker_cpu=1
offcpu t=120000000 thread=0 stack=10 state=R cpu_out=1 cpu_in=0 blocked_ns=0 runq_ns=2000000
offcpu t=130000000 thread=1 stack=9 state=D cpu_out=1 cpu_in=1 blocked_ns=4000000 runq_ns=0
offcpu t=140000000 thread=2 stack=13 state=S cpu_out=0 cpu_in=0 blocked_ns=1000000 runq_ns=500000 waker=0 waker_stack=2 waker_cpu=0
EOT
	"$SPOOLGEN" <off.txt >off.spulse || return 1
	{
		cat known.spulse.kallsyms
		printf 'ffffffff81000300 T schedule\nffffffff81000400 T futex_wait\n'
		printf 'ffffffff81000500 T io_schedule\nffffffff81000600 T try_to_wake_up\n'
	} >off.spulse.kallsyms
	"$SP" check off.spulse >check.out 2>&1 ||
		die "off-CPU spool invalid: $(cat check.out)" || return 1
}

# row NAME (from test_report.sh): "self total" of NAME's report row

# The default self of report --off-cpu is the wait site, the first frame
# from the leaf that is not the scheduler's (issue 26: sorted by self, the
# old report put 100% on the scheduler's leaf): futex_wait for A, the
# caller of io_schedule/schedule for B..E; schedule and io_schedule keep
# their totals. --help says so.
test_offcpu_report_self_is_the_wait_site() {
	build_offcpu || return 1
	expect_rc 0 "$SP" report off.spulse --off-cpu --top 0 || return 1
	[ "$(row futex_wait)" = "73.100 73.100" ] || die "futex_wait: $(row futex_wait)" || return 1
	[ "$(row known_beta_mid)" = "18.000 91.100" ] || die "beta: $(row known_beta_mid)" || return 1
	[ "$(row schedule)" = "0.000 80.600" ] || die "schedule: $(row schedule)" || return 1
	[ "$(row io_schedule)" = "0.000 14.500" ] || die "io_schedule: $(row io_schedule)" || return 1
	sed -n 3p out | grep -q '^ *80\.24% *73\.100 *80\.24% *73\.100  futex_wait \[kernel.kallsyms\]$' ||
		die "first row: $(sed -n 3p out)" || return 1
	expect_rc 0 "$SP" report off.spulse --off-cpu --json --top 1 || return 1
	json_check out 'j["rows"][0]["function"] == "futex_wait"' ||
		die "json first row: $(cat out)" || return 1
	expect_rc 0 "$SP" report --help || return 1
	grep -q 'the wait site' out && grep -q -- '--sched-leaf' out ||
		die "--help does not say what self is" || return 1
	expect_rc 2 "$SP" report off.spulse --sched-leaf || return 1
}

test_offcpu_report_known_totals() {
	build_offcpu || return 1
	expect_rc 0 "$SP" report off.spulse --off-cpu --sched-leaf --top 0 ||
		return 1
	head -n 1 out | grep -q '^# off.spulse: 91.100 ms off-CPU, metric offcpu (blocked+runq), in 6 intervals, 6 functions, sorted by self$' ||
		die "header: $(head -n 1 out)" || return 1
	[ "$(row schedule)" = "80.600 80.600" ] || die "schedule: $(row schedule)" || return 1
	[ "$(row io_schedule)" = "10.500 14.500" ] || die "io_schedule: $(row io_schedule)" || return 1
	[ "$(row futex_wait)" = "0.000 73.100" ] || die "futex_wait: $(row futex_wait)" || return 1
	[ "$(row known_alpha_leaf)" = "0.000 73.100" ] || die "alpha: $(row known_alpha_leaf)" || return 1
	# recursion (I6: beta twice) is counted once: 91.1, not 92.6
	[ "$(row known_beta_mid)" = "0.000 91.100" ] || die "beta: $(row known_beta_mid)" || return 1
	[ "$(row known_gamma_root)" = "0.000 91.100" ] || die "gamma: $(row known_gamma_root)" || return 1
	grep -q '^ *88\.47% *80\.600 *88\.47% *80\.600  schedule \[kernel.kallsyms\]$' out ||
		die "schedule percentages" || return 1
	# the samples do not leak into the off-CPU report
	! grep -q known_kernel_fn out || die "on-CPU-only function listed"
}

test_offcpu_report_metric_state_pid() {
	build_offcpu || return 1
	expect_rc 0 "$SP" report off.spulse --off-cpu --sched-leaf --metric blocked \
		--top 0 || return 1
	grep -q '^# off.spulse: 85.000 ms off-CPU, metric blocked, in 6 intervals' out ||
		die "blocked: $(head -n 1 out)" || return 1
	[ "$(row schedule)" = "75.000 75.000" ] || die "blocked schedule: $(row schedule)" || return 1
	expect_rc 0 "$SP" report off.spulse --off-cpu --metric runq --top 0 || return 1
	grep -q '^# off.spulse: 6.100 ms off-CPU, metric runq,' out ||
		die "runq: $(head -n 1 out)" || return 1
	expect_rc 0 "$SP" report off.spulse --off-cpu --sched-leaf --state D \
		--top 0 || return 1
	grep -q '14.500 ms off-CPU.* in 2 intervals, states D,' out ||
		die "state D: $(head -n 1 out)" || return 1
	[ "$(row io_schedule)" = "10.500 14.500" ] || die "D io_schedule: $(row io_schedule)" || return 1
	[ "$(row schedule)" = "4.000 4.000" ] || die "D schedule: $(row schedule)" || return 1
	! grep -q futex_wait out || die "S interval under --state D" || return 1
	expect_rc 0 "$SP" report off.spulse --off-cpu --state S,R --top 0 || return 1
	grep -q '76.600 ms off-CPU.* in 4 intervals, states R,S,' out ||
		die "state S,R: $(head -n 1 out)" || return 1
	expect_rc 0 "$SP" report off.spulse --off-cpu --pid 200 --top 0 || return 1
	grep -q '4.000 ms off-CPU.* in 1 intervals of pid 200' out ||
		die "pid 200: $(head -n 1 out)" || return 1
	expect_rc 0 "$SP" report off.spulse --off-cpu --by total --top 2 || return 1
	[ "$(awk 'NR > 2' out | wc -l)" -eq 2 ] || die "--top 2" || return 1
	awk 'NR > 2 {print $5}' out | grep -q known_gamma_root ||
		die "--by total does not list gamma first"
	expect_rc 2 "$SP" report off.spulse --off-cpu --state Q || return 1
	grep -q "unknown state 'Q'" err || die "no message for --state Q" || return 1
	expect_rc 2 "$SP" report off.spulse --off-cpu --metric wall || return 1
	expect_rc 2 "$SP" report off.spulse --state S || return 1
	grep -q 'need --off-cpu' err || die "--state without --off-cpu accepted"
}

# json_check FILE PYEXPR...: FILE parses as exactly one JSON value (python3)
# and every expression over it (as j) is true.
json_check() {
	local f=$1
	shift
	python3 - "$f" "$@" <<'EOF'
import json, sys
raw = open(sys.argv[1], "rb").read()
text = raw.decode("utf-8")          # strict: must be valid UTF-8
j = json.loads(text)                # exactly one value, no trailing data
for e in sys.argv[2:]:
    if not eval(e, {"j": j}):
        sys.exit("false: " + e)
EOF
}

test_report_json_shape_and_values() {
	build_offcpu || return 1
	expect_rc 0 "$SP" report off.spulse --off-cpu --sched-leaf --json \
		--top 0 || return 1
	[ "$(wc -l <out)" -eq 1 ] || die "not one line" || return 1
	json_check out 'j["unit"] == "ns"' 'j["total"] == 91100000' \
		'len(j["rows"]) == 6' \
		'j["rows"][0] == {"function": "schedule", "module": "[kernel.kallsyms]", "self": 80600000, "total": 80600000}' \
		'[r["total"] for r in j["rows"] if r["function"] == "known_beta_mid"] == [91100000]' \
		'all(set(r) == {"function", "module", "self", "total"} for r in j["rows"])' \
		'[r["self"] for r in j["rows"]] == sorted([r["self"] for r in j["rows"]], reverse=True)' ||
		die "off-CPU json: $(cat out)" || return 1
	# on-CPU: samples, module paths, --top respected
	expect_rc 0 "$SP" report known.spulse --json --top 2 || return 1
	json_check out 'j["unit"] == "samples"' 'j["total"] == 16' \
		'len(j["rows"]) == 2' \
		'j["rows"][0]["function"] == "known_alpha_leaf" and j["rows"][0]["self"] == 7' \
		'j["rows"][0]["module"].endswith("/known")' ||
		die "on-CPU json: $(cat out)" || return 1
}

test_report_json_escapes_non_utf8() {
	# a comm and a module path with quotes, a control byte, valid UTF-8
	# (é) and an invalid byte (0xff): valid UTF-8 passes, 0xff -> \u00ff
	cat >u.txt <<'EOT'
# header start_us=1 interval_us=1
module id=0 pid=1 start=0x1000 end=0x2000 file_offset=0 path=/x/"q"\x01\xc3\xa9\xff.so build_id=
thread id=0 pid=1 tid=1 comm=c\xc3\xa9\xff
frame id=0 kind=module module=0 rel=0x10
stack id=0 parent=root frame=0
sample dt_ns=1 thread=0 stack=0
EOT
	"$SPOOLGEN" <u.txt >u.spulse || return 1
	expect_rc 0 "$SP" report u.spulse --json || return 1
	grep -q '\\"q\\"\\u0001é\\u00ff.so' out || die "escaping: $(cat out)" ||
		return 1
	json_check out 'j["rows"][0]["module"] == "/x/\"q\"\x01\u00e9\u00ff.so"' \
		'j["rows"][0]["function"].startswith("0x10 [")' ||
		die "json: $(cat out)" || return 1
	expect_rc 0 "$SP" export u.spulse --format json || return 1
	json_check out 'j["threads"][0]["comm"] == "c\u00e9\u00ff"' ||
		die "export json comm"
}

test_offcpu_flame_folded_exact() {
	build_offcpu || return 1
	expect_rc 0 "$SP" flame --off-cpu --folded off.spulse || return 1
	sort out >got
	sort >want <<'EOT'
known_gamma_root;known_beta_mid;known_alpha_leaf;futex_wait;schedule 73100000
known_gamma_root;known_beta_mid;io_schedule 10500000
known_gamma_root;known_beta_mid;schedule 2000000
known_gamma_root;known_beta_mid;io_schedule;schedule 4000000
known_gamma_root;known_beta_mid;known_beta_mid;schedule 1500000
EOT
	diff want got || die "off-CPU folded stacks differ" || return 1
	expect_rc 0 "$SP" flame --off-cpu --folded --state D --metric blocked off.spulse || return 1
	sort out | tr '\n' '|' >got
	[ "$(cat got)" = 'known_gamma_root;known_beta_mid;io_schedule 10000000|known_gamma_root;known_beta_mid;io_schedule;schedule 4000000|' ] ||
		die "D/blocked folded: $(cat got)"
}

test_offcpu_flame_wakers_folded() {
	build_offcpu || return 1
	expect_rc 0 "$SP" flame --wakers --folded off.spulse || return 1
	sort out >got
	sort >want <<'EOT'
known_gamma_root;known_beta_mid;known_alpha_leaf;futex_wait;schedule;--;try_to_wake_up;known_kernel_fn;known_beta_mid;known_gamma_root 73100000
known_gamma_root;known_beta_mid;io_schedule;--;try_to_wake_up;known_kernel_fn;known_beta_mid;known_gamma_root 10500000
known_gamma_root;known_beta_mid;schedule 2000000
known_gamma_root;known_beta_mid;io_schedule;schedule 4000000
known_gamma_root;known_beta_mid;known_beta_mid;schedule;--;known_alpha_leaf;known_beta_mid;known_gamma_root 1500000
EOT
	diff want got || die "waker folded stacks differ"
}

test_offcpu_flame_svg_palette() {
	local on off
	build_offcpu || return 1
	expect_rc 0 "$SP" flame --off-cpu off.spulse -o off.svg || return 1
	grep -q '<title>schedule (73.100 ms, 80.24%)</title>' off.svg ||
		die "no schedule box in ms" || return 1
	grep -q '<title>all (91.100 ms, 100.00%)</title>' off.svg ||
		die "no root box" || return 1
	grep -q '(91.100 ms off-CPU)</text>' off.svg || die "title" || return 1
	# blue/cyan: every box except root/grey has blue > red
	off=$(grep -o 'fill="rgb([0-9]*,[0-9]*,[0-9]*)"' off.svg |
		tr -c '0-9\n' ' ' | awk '$1 != $3 && $3 <= $1 {n++} END {print n + 0}')
	[ "$off" -eq 0 ] || die "$off off-CPU boxes are not blue/cyan" || return 1
	expect_rc 0 "$SP" flame off.spulse -o on.svg || return 1
	on=$(grep -o 'fill="rgb([0-9]*,[0-9]*,[0-9]*)"' on.svg |
		tr -c '0-9\n' ' ' | awk '$3 > $1 {n++} END {print n + 0}')
	[ "$on" -eq 0 ] || die "$on on-CPU boxes are blue" || return 1
	expect_rc 0 "$SP" flame --wakers off.spulse -o w.svg || return 1
	grep -q '<title>-- (' w.svg || die "no separator box" || return 1
	grep -q '<title>try_to_wake_up (73.100 ms' w.svg &&
		grep -q '<title>try_to_wake_up (10.500 ms' w.svg ||
		die "no waker boxes (73.1 and 10.5 ms)"
}

# hist_counts TITLE_REGEX: "low-high:count ..." of the histogram after the
# first line matching TITLE_REGEX in out.
hist_counts() {
	awk -v re="$1" '
		found && /^ *[0-9]+ -> [0-9]+ *:/ {
			printf "%s-%s:%s ", $1, $3, $5; next }
		found && /usecs/ { next }
		found { exit }
		$0 ~ re { found = 1 }' out
}

test_latency_histogram_buckets() {
	local h
	build_offcpu || return 1
	expect_rc 0 "$SP" latency off.spulse || return 1
	grep -q '^# off.spulse: 6 off-CPU intervals, 91.100 ms off-CPU (blocked 85.000 ms, runq 6.100 ms)$' out ||
		die "header: $(head -n 1 out)" || return 1
	# runq: 0 us, 100 us, 500 us x2, 2000 us, 3000 us
	h=$(hist_counts '^run-queue delay.* 6 intervals$')
	[ "$h" = "0-1:1 2-3:0 4-7:0 8-15:0 16-31:0 32-63:0 64-127:1 128-255:0 256-511:2 512-1023:0 1024-2047:1 2048-4095:1 " ] ||
		die "runq histogram: $h" || return 1
	# S: 50100, 23000, 1500 us
	h=$(hist_counts 'state S \(sleeping\), 3 intervals$' | tr ' ' '\n' | grep -v ':0$' | tr '\n' ' ')
	[ "$h" = "1024-2047:1 16384-32767:1 32768-65535:1 " ] || die "S histogram: $h" || return 1
	h=$(hist_counts 'state D .*, 2 intervals$' | tr ' ' '\n' | grep -v ':0$' | tr '\n' ' ')
	[ "$h" = "2048-4095:1 8192-16383:1 " ] || die "D histogram: $h" || return 1
	h=$(hist_counts 'state R .*, 1 intervals$' | tr ' ' '\n' | grep -v ':0$' | tr '\n' ' ')
	[ "$h" = "1024-2047:1 " ] || die "R histogram: $h" || return 1
	# the bar of the largest bucket is full width (40), half of it 20
	grep -q '^ *256 -> 511 *: 2 *|\*\{40\}|$' out || die "full bar" || return 1
	grep -q '^ *64 -> 127 *: 1 *|\*\{20\} \{20\}|$' out || die "half bar" ||
		return 1
	# the same numbers as JSON
	expect_rc 0 "$SP" latency off.spulse --json --top 0 || return 1
	json_check out 'j["unit"] == "us" and j["intervals"] == 6' \
		'j["blocked_ns"] == 85000000 and j["runq_ns"] == 6100000' \
		'[(b["low"], b["count"]) for b in j["histograms"][0]["buckets"] if b["count"]] == [(0, 1), (64, 1), (256, 2), (1024, 1), (2048, 1)]' \
		'j["histograms"][0]["metric"] == "runq" and j["histograms"][0]["state"] is None' \
		'[(h["state"], h["count"]) for h in j["histograms"][1:]] == [("R", 1), ("S", 3), ("D", 2)]' \
		'j["longest"] == []' || die "latency json: $(cat out)"
}

test_latency_per_thread() {
	build_offcpu || return 1
	expect_rc 0 "$SP" latency off.spulse --per-thread --top 0 || return 1
	[ "$(grep -c '^== thread ' out)" -eq 3 ] || die "thread sections" || return 1
	awk '/^== thread known 100\/100 ==/ {f = 1; next} /^== / {f = 0}
	     f && /^run-queue delay/' out | grep -q ', 3 intervals$' ||
		die "known/100: 3 intervals" || return 1
	awk '/^== thread worker 100\/101 ==/ {f = 1; next} /^== / {f = 0}
	     f && /state D/' out | grep -q ', 1 intervals$' ||
		die "worker/101: one D interval" || return 1
	expect_rc 0 "$SP" latency off.spulse --per-thread --json --pid 200 --top 0 || return 1
	json_check out 'len(j["histograms"]) == 2' \
		'all(h["tid"] == 201 and h["comm"] == "other" for h in j["histograms"])' ||
		die "per-thread json: $(cat out)"
}

test_latency_longest_waits_order() {
	build_offcpu || return 1
	expect_rc 0 "$SP" latency off.spulse --top 3 || return 1
	grep -q '^# 3 longest off-CPU intervals (of 6), by blocked + runq$' out ||
		die "no longest header" || return 1
	grep -A2 '^  1\. ' out >l1
	grep -q '^  1\. 0.001000 s  known 100/100  S  off-CPU 50.100 ms  blocked 50.000 ms  runq 0.100 ms  cpu 0->1$' l1 ||
		die "first: $(cat l1)" || return 1
	# by default the kernel part is one marker naming the wait site
	grep -q '^     stack: \[2 kernel frames: futex_wait\] <- known_alpha_leaf <- known_beta_mid <- known_gamma_root$' l1 ||
		die "first stack: $(cat l1)" || return 1
	grep -q '^     waker: other 200/201 cpu 1: \[2 kernel frames: try_to_wake_up\] <- known_beta_mid <- known_gamma_root$' l1 ||
		die "first waker: $(cat l1)" || return 1
	grep -q '^  2\. 0.060000 s  known 100/100  S  off-CPU 23.000 ms' out ||
		die "second" || return 1
	grep -q '^  3\. 0.100000 s  worker 100/101  D  off-CPU 10.500 ms' out ||
		die "third" || return 1
	! grep -q '^  4\. ' out || die "--top 3 printed a fourth" || return 1
	# --frames N: every frame as it is
	expect_rc 0 "$SP" latency off.spulse --top 1 --frames 6 || return 1
	grep -q '^     stack: schedule <- futex_wait <- known_alpha_leaf <- known_beta_mid <- known_gamma_root$' out ||
		die "--frames 6 stack: $(cat out)" || return 1
	grep -q '^     waker: other 200/201 cpu 1: try_to_wake_up <- known_kernel_fn <- known_beta_mid <- known_gamma_root$' out ||
		die "--frames 6 waker: $(cat out)" || return 1
	expect_rc 0 "$SP" latency off.spulse --top 1 --frames 2 || return 1
	grep -q '^     stack: schedule <- futex_wait <- \.\.\.$' out ||
		die "--frames 2 stack: $(cat out)" || return 1
	# --kernel: nothing to fold
	expect_rc 0 "$SP" latency off.spulse --top 1 --kernel || return 1
	grep -q '^     stack: schedule <- futex_wait$' out ||
		die "--kernel stack: $(cat out)" || return 1
	expect_rc 0 "$SP" latency off.spulse --top 0 --frames 2 --json || return 1
	json_check out 'j["longest"] == []' || return 1
	expect_rc 0 "$SP" latency off.spulse --top 6 --frames 2 --json || return 1
	json_check out \
		'[round(w["offcpu_ns"] / 1e5) for w in j["longest"]] == [501, 230, 105, 40, 20, 15]' \
		'j["longest"][0]["stack"] == ["schedule", "futex_wait"]' \
		'j["longest"][0]["waker"] == {"pid": 200, "tid": 201, "comm": "other", "cpu": 1, "stack": ["try_to_wake_up", "known_kernel_fn"]}' \
		'j["longest"][4]["waker"] is None and j["longest"][4]["state"] == "R"' ||
		die "longest json: $(cat out)" || return 1
	grep -q 'waker: none recorded' <("$SP" latency off.spulse --top 6) ||
		die "no 'none recorded' waker line"
}

# trace_check FILE: structural checks of a trace-event file (python3).
trace_check() {
	python3 - "$@" <<'EOF'
import json, sys
j = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
assert set(j) >= {"traceEvents", "displayTimeUnit"}, j.keys()
assert j["displayTimeUnit"] == "ns"
ev = j["traceEvents"]
last = {}
for e in ev:
    assert e["ph"] in "MXisf", e
    assert isinstance(e["pid"], int) and isinstance(e["tid"], int), e
    if e["ph"] == "M":
        continue
    assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0, e
    k = (e["pid"], e["tid"])
    assert e["ts"] >= last.get(k, 0), ("backwards", e)
    last[k] = e["ts"]
    if e["ph"] == "X":
        assert e["dur"] >= 0, e
    if e["ph"] == "i":   # samples thread-scoped, triggers global
        assert e["s"] == ("g" if e["cat"] == "trigger" else "t"), e
for e in sys.argv[2:]:
    if not eval(e, {"j": j, "ev": ev}):
        sys.exit("false: " + e)
EOF
}

test_export_trace_event_slices() {
	build_offcpu || return 1
	expect_rc 0 "$SP" export off.spulse --format trace-event -o t.json || return 1
	trace_check t.json \
		'{(e["tid"], e["args"]["name"]) for e in ev if e["ph"] == "M" and e["name"] == "thread_name"} == {(100, "known"), (101, "worker"), (201, "other")}' \
		'{(e["pid"], e["args"]["name"]) for e in ev if e["ph"] == "M" and e["name"] == "process_name"} == {(100, "known"), (200, "other")}' \
		'sorted((e["tid"], e["ts"], e["dur"]) for e in ev if e["name"] == "blocked S") == [(100, 1000.0, 50000.0), (100, 60000.0, 20000.0), (101, 140000.0, 1000.0)]' \
		'sorted((e["tid"], e["ts"], e["dur"]) for e in ev if e["name"] == "blocked D") == [(101, 100000.0, 10000.0), (201, 130000.0, 4000.0)]' \
		'sorted((e["tid"], e["ts"], e["dur"]) for e in ev if e["name"] == "runnable (runq)") == [(100, 51000.0, 100.0), (100, 80000.0, 3000.0), (100, 120000.0, 2000.0), (101, 110000.0, 500.0), (101, 141000.0, 500.0)]' \
		'sum(1 for e in ev if e["ph"] == "i" and e["cat"] == "sample") == 16' \
		'[e["name"] for e in ev if e["ph"] == "i"].count("known_alpha_leaf") == 7' \
		'next(e for e in ev if e["ph"] == "i")["args"]["stack"][-1] == "known_gamma_root"' \
		'next(e for e in ev if e["name"] == "blocked S")["args"]["stack"][0] == "schedule"' \
		'next(e for e in ev if e["name"] == "blocked S")["args"]["waker"]["tid"] == 201' \
		'sum(1 for e in ev if e["ph"] == "s") == 4 and sum(1 for e in ev if e["ph"] == "f") == 4' \
		'not any(e["name"] == "running" for e in ev)' \
		'[(e["name"], e["s"], e["ts"], e["args"]["text"]) for e in ev if e.get("cat") == "trigger"] == [("trigger manual", "g", 65000.0, "manual")]' \
		'j["otherData"]["intervals"] == 6 and j["otherData"]["triggers"] == 1' ||
		die "trace-event content" || return 1
	# sample ts carry the ns fraction: the first sample is at 1000 ns = 1.0 us
	grep -q '"ts":1\.000' t.json || die "no fractional ts" || return 1
	expect_rc 0 "$SP" export off.spulse --format trace-event --running --state S,R || return 1
	mv out r.json
	trace_check r.json \
		'sorted((e["tid"], e["ts"], e["dur"]) for e in ev if e["name"] == "running") == [(100, 51100.0, 8900.0), (100, 83000.0, 37000.0)]' \
		'not any(e["name"] == "blocked D" for e in ev)' ||
		die "--running / --state" || return 1
	expect_rc 2 "$SP" export off.spulse --format json --running
}

test_offcpu_old_spool_without_intervals() {
	build_known || return 1
	expect_rc 0 timeout 20 "$SP" report known.spulse --off-cpu || return 1
	grep -q 'no off-CPU intervals' err || die "no message: $(cat err)" || return 1
	grep -q '0.000 ms off-CPU.* in 0 intervals, 0 functions' out ||
		die "empty report: $(cat out)" || return 1
	expect_rc 0 timeout 20 "$SP" report known.spulse --off-cpu --json || return 1
	json_check out 'j == {"unit": "ns", "total": 0, "rows": []}' || return 1
	expect_rc 0 timeout 20 "$SP" flame --off-cpu --folded known.spulse || return 1
	[ ! -s out ] || die "folded output for no intervals" || return 1
	grep -q 'no off-CPU intervals' err || return 1
	expect_rc 0 timeout 20 "$SP" flame --wakers known.spulse -o e.svg || return 1
	grep -q '</svg>' e.svg || return 1
	expect_rc 0 timeout 20 "$SP" latency known.spulse || return 1
	grep -q 'no off-CPU intervals' err || return 1
	grep -q '^# known.spulse: 0 off-CPU intervals' out || return 1
	expect_rc 0 timeout 20 "$SP" latency known.spulse --json --per-thread || return 1
	json_check out 'j["intervals"] == 0 and j["histograms"] == [] and j["longest"] == []' ||
		return 1
	expect_rc 0 timeout 20 "$SP" export known.spulse --format trace-event -o t.json || return 1
	trace_check t.json 'sum(1 for e in ev if e["ph"] == "i" and e["cat"] == "sample") == 16' \
		'not any(e["ph"] == "X" for e in ev)'
}

test_offcpu_truncated_spool_recovers() {
	local size
	build_offcpu || return 1
	size=$(stat -c %s off.spulse)
	head -c $((size - 3)) off.spulse >cut.spulse
	expect_rc 0 "$SP" latency cut.spulse --top 1 || return 1
	grep -q 'recovered from truncated tail' err || die "no recovery note" ||
		return 1
	grep -q '^# cut.spulse: 5 off-CPU intervals' out ||
		die "the cut interval is not dropped: $(head -n 1 out)"
}

test_offcpu_synth_totals_agree() {
	local n total
	"$SP" synth -q -o s.spulse --samples 5000 --kallsyms --cpus 2 \
		--off-cpu 3000 --triggers 2 || return 1
	n=$(json_field offcpu "$("$SP" check --json s.spulse)")
	[ "$n" -eq 3000 ] || die "synth wrote $n intervals" || return 1
	expect_rc 0 "$SP" report s.spulse --off-cpu --json --top 0 || return 1
	mv out r.json
	total=$(python3 -c 'import json,sys; print(json.load(open("r.json"))["total"])')
	json_check r.json 'sum(r["self"] for r in j["rows"]) == j["total"]' \
		'all(r["self"] <= r["total"] <= j["total"] for r in j["rows"])' ||
		die "report self does not add up" || return 1
	expect_rc 0 "$SP" flame --off-cpu --folded s.spulse || return 1
	[ "$(awk '{s += $NF} END {printf "%.0f", s}' out)" = "$total" ] ||
		die "folded sum != report total $total" || return 1
	expect_rc 0 "$SP" flame --wakers --folded s.spulse || return 1
	[ "$(awk '{s += $NF} END {printf "%.0f", s}' out)" = "$total" ] ||
		die "waker folded sum != report total" || return 1
	grep -q ';--;' out || die "no waker stacks in synth" || return 1
	expect_rc 0 "$SP" latency s.spulse --json --top 50 || return 1
	json_check out 'j["intervals"] == 3000' \
		"j[\"blocked_ns\"] + j[\"runq_ns\"] == $total" \
		'j["histograms"][0]["count"] == 3000' \
		'sum(h["count"] for h in j["histograms"][1:]) == 3000' \
		'all(sum(b["count"] for b in h["buckets"]) == h["count"] for h in j["histograms"])' \
		'[w["offcpu_ns"] for w in j["longest"]] == sorted([w["offcpu_ns"] for w in j["longest"]], reverse=True)' \
		'all(w["offcpu_ns"] == w["blocked_ns"] + w["runq_ns"] for w in j["longest"])' ||
		die "latency json does not add up" || return 1
	expect_rc 0 "$SP" latency s.spulse --json --per-thread --top 0 || return 1
	json_check out 'sum(h["count"] for h in j["histograms"] if h["metric"] == "runq") == 3000' ||
		die "per-thread counts" || return 1
	expect_rc 0 "$SP" export s.spulse --format trace-event --running -o t.json ||
		return 1
	trace_check t.json \
		"abs(sum(e['dur'] for e in ev if e['ph'] == 'X' and e['cat'] == 'offcpu') * 1000 - $total) < 3000" \
		'sum(1 for e in ev if e["ph"] == "i" and e["cat"] == "sample") == 5000' \
		'any(e["name"] == "running" for e in ev)' ||
		die "trace-event totals"
}

test_offcpu_corrupt_interval_exit_1_with_offset() {
	local off end c e
	build_offcpu || return 1
	# the fourth interval (I4) gets state 9: corruption inside that record
	awk '/^offcpu t=120000000 /{sub("state=R", "state=9")} {print}' off.txt >bad.txt
	"$SPOOLGEN" -v <bad.txt >bad.spulse 2>offsets || return 1
	off=$(awk '$2 == "offcpu" {n++; if (n == 4) print $1}' offsets)
	end=$(awk '$2 == "offcpu" {n++; if (n == 5) print $1}' offsets)
	[ -n "$off" ] && [ -n "$end" ] || die "no offsets for the bad record" ||
		return 1
	for c in "report bad.spulse --off-cpu" "flame --wakers --folded bad.spulse" \
		"latency bad.spulse" "export bad.spulse --format trace-event"; do
		# shellcheck disable=SC2086
		expect_rc 1 timeout 20 "$SP" $c || return 1
		e=$(error_offset)
		[ -n "$e" ] && [ "$e" -ge "$off" ] && [ "$e" -lt "$end" ] ||
			die "$c: error offset '$e' not in the record $off..$end: $(cat err)" ||
			return 1
		grep -q 'off-CPU state 9' err || die "$c: no reason: $(cat err)" ||
			return 1
	done
}
