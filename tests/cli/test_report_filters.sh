# report filters and sort keys (--pid/--tid/--comm/--dso/--time,
# --kernel/--user, --sort, --percent-limit) against an independent Python
# model: gen_model writes a seeded random spool (dump text for spoolgen)
# and model.json with every sample's thread and frames; model_check runs
# `spulse report --json --top 0 ARGS` and recomputes the rows in Python
# from model.json with the same ARGS.

# gen_model: model.spulse (+ .kallsyms) and model.json. Three processes,
# five threads (two share a comm, one comm appears in two processes), three
# modules (paths that do not exist, so frames stay "0xREL [PATH]"), kernel
# frames named by the sidecar, absolute user frames, a truncated root;
# 3000 samples at known times (deltas sometimes negative).
gen_model() {
	python3 - <<'PY' || return 1
import json, random
rnd = random.Random(20261201)
threads = [  # id, pid, tid, comm
    (0, 100, 100, "server"), (1, 100, 101, "worker"), (2, 100, 102, "worker"),
    (3, 200, 200, "worker"), (4, 300, 301, "batch")]
mods = [(0, 100, "/m/bin/server"), (1, 100, "/m/lib/libc.so.6"),
        (2, 200, "/m/lib/libc.so.6"), (3, 300, "/m/bin/batch")]
lines = ["# header start_us=1767225600000000 interval_us=1000"]
for mid, pid, path in mods:
    lines.append("module id=%d pid=%d start=0x%x end=0x%x file_offset=0x0 path=%s build_id="
                 % (mid, pid, 0x400000 + mid * 0x100000, 0x4f0000 + mid * 0x100000, path))
for tid_, pid, tid, comm in threads:
    lines.append("thread id=%d pid=%d tid=%d comm=%s" % (tid_, pid, tid, comm))
frames = []  # (kind, module, addr, name, dso)
def frame(kind, mod=None, addr=0):
    if kind == "module":
        name, dso = "0x%x [%s]" % (addr, mods[mod][2]), mods[mod][2]
    elif kind == "kernel":
        name, dso = "kfn_%d" % ((addr - 0xffffffff81000000) // 0x100), "[kernel.kallsyms]"
    elif kind == "user":
        name, dso = "0x%x" % addr, "[unknown]"
    else:
        name, dso = "[truncated]", ""
    frames.append((kind, mod, addr, name, dso))
    return len(frames) - 1
mfr = {m: [frame("module", m, 0x100 * (i + 1)) for i in range(6)] for m in range(4)}
kfr = [frame("kernel", None, 0xffffffff81000000 + 0x100 * i + 0x10) for i in range(5)]
ufr = [frame("user", None, 0x7fff0000 + 0x40 * i) for i in range(2)]
tr = frame("truncated")
for i, (kind, mod, addr, name, dso) in enumerate(frames):
    if kind == "module":
        lines.append("frame id=%d kind=module module=%d rel=0x%x" % (i, mod, addr))
    elif kind == "truncated":
        lines.append("frame id=%d kind=truncated" % i)
    else:
        lines.append("frame id=%d kind=%s addr=0x%x" % (i, kind, addr))
stacks = {}  # tuple of frames (root first) -> id
def stack(path):
    parent = "root"
    for d in range(1, len(path) + 1):
        key = tuple(path[:d])
        if key not in stacks:
            stacks[key] = len(stacks)
            lines.append("stack id=%d parent=%s frame=%d" % (stacks[key], parent, path[d - 1]))
        parent = str(stacks[key])
    return stacks[tuple(path)]
pmods = {100: [0, 1], 200: [2], 300: [3]}
samples = []
t = 5000000
for n in range(3000):
    th = rnd.choice([0, 0, 1, 1, 2, 3, 4])
    pid = threads[th][1]
    ms = pmods[pid]
    path = []
    if rnd.random() < 0.1:
        path.append(tr)
    depth = rnd.randint(1, 5)
    for d in range(depth):
        m = ms[min(d // 2, len(ms) - 1)] if rnd.random() < 0.8 else rnd.choice(ms)
        path.append(rnd.choice(mfr[m][:4 if d < 2 else 6]))
    if rnd.random() < 0.1:
        path.append(rnd.choice(mfr[ms[0]][:2]))   # some recursion
    if rnd.random() < 0.15:
        path.append(rnd.choice(ufr))
    if rnd.random() < 0.3:
        path += rnd.sample(kfr, rnd.randint(1, 3))
    t += rnd.randint(-200000, 900000)
    samples.append({"t": t, "thread": th, "frames": path})
    lines.append("sample t=%d thread=%d stack=%d" % (t, th, stack(path)))
open("model.txt", "w").write("\n".join(lines) + "\n")
with open("model.spulse.kallsyms", "w") as f:
    f.write("ffffffff81000000 T _stext\n")
    for i in range(5):
        f.write("%x T kfn_%d\n" % (0xffffffff81000000 + 0x100 * i, i))
json.dump({"threads": threads, "frames": frames, "samples": samples},
          open("model.json", "w"))
PY
	"$SPOOLGEN" <model.txt >model.spulse || return 1
	"$SP" check model.spulse >/dev/null || die "model spool invalid"
}

# model_expect ARGS...: expected report JSON rows (the model) into want,
# spulse's into got (both canonical: sorted lines), then compare, and check
# that spulse's order is by the --by value, descending.
model_check() {
	expect_rc 0 "$SP" report model.spulse --json --top 0 "$@" || return 1
	python3 - "$@" <<'PY' || return 1
import json, sys
args = sys.argv[1:]
m = json.load(open("model.json"))
opt = {}
i = 0
flags = {"--kernel", "--user"}
while i < len(args):
    if args[i] in flags:
        opt[args[i]] = True; i += 1
    else:
        opt.setdefault(args[i], []).append(args[i + 1]); i += 2
def lst(k, conv=str):
    return [conv(x) for v in opt.get(k, []) for x in v.split(",")]
pids, tids, comms, dsos = lst("--pid", int), lst("--tid", int), lst("--comm"), lst("--dso")
keys = lst("--sort") or ["sym"]
by_total = opt.get("--by", ["self"])[0] == "total"
origin = min(s["t"] for s in m["samples"])
lo, hi = 0, float("inf")
if "--time" in opt:
    a, b = opt["--time"][0].split(",")
    lo = origin + float(a) * 1e9 if a else 0
    hi = origin + float(b) * 1e9 if b else float("inf")
frames, threads = m["frames"], m["threads"]
def kind_ok(f):
    k = frames[f][0]
    if opt.get("--kernel"): return k == "kernel"
    if opt.get("--user"): return k != "kernel"
    return True
def dso_ok(d):
    return d in dsos or d.split("/")[-1] in dsos
rows, total = {}, 0
for s in m["samples"]:
    th = threads[s["thread"]]
    if pids and th[1] not in pids: continue
    if tids and th[2] not in tids: continue
    if comms and th[3] not in comms: continue
    if not (lo <= s["t"] < hi): continue
    fr = [f for f in s["frames"] if kind_ok(f)]
    if not fr: continue
    if dsos and not any(dso_ok(frames[f][4]) for f in fr): continue
    total += 1
    def mod_of(f):
        # a dso row of the truncated marker is named [truncated]
        if frames[f][0] == "truncated" and "dso" in keys:
            return "[truncated]"
        return frames[f][4]
    def key(f):
        out = []
        for k in keys:
            if k == "sym":
                out += [("function", frames[f][3]), ("module", mod_of(f))]
            elif k == "dso": out.append(("module", mod_of(f)))
            elif k == "comm": out.append(("comm", th[3]))
            elif k == "pid": out.append(("pid", th[1]))
            elif k == "tid": out.append(("tid", th[2]))
        return tuple(sorted(set(out)))
    seen = set()
    for f in fr:
        k = key(f)
        r = rows.setdefault(k, [0, 0])
        if k not in seen:
            seen.add(k); r[1] += 1
    rows[key(fr[-1])][0] += 1
got = json.load(open("out"))
assert got["unit"] == "samples", got["unit"]
assert got["total"] == total, "total %d, model %d" % (got["total"], total)
want = sorted("%s self=%d total=%d" % (sorted(k), v[0], v[1]) for k, v in rows.items())
have = []
for r in got["rows"]:
    k = tuple(sorted((a, b) for a, b in r.items() if a not in ("self", "total")))
    have.append("%s self=%d total=%d" % (sorted(k), r["self"], r["total"]))
if sorted(have) != want:
    import difflib
    sys.stderr.write("\n".join(difflib.unified_diff(want, sorted(have), "model", "spulse", lineterm="")) + "\n")
    sys.exit(1)
vals = [r["total" if by_total else "self"] for r in got["rows"]]
assert vals == sorted(vals, reverse=True), "rows not sorted by the --by value"
print("rows", len(have), "total", total)
PY
}

test_report_model_unfiltered_rows_match() {
	gen_model || return 1
	model_check || return 1
	model_check --by total
}

test_report_filter_tid_and_pid_list() {
	gen_model || return 1
	model_check --tid 101 || return 1
	model_check --tid 101,301 || return 1
	model_check --pid 100,300 || return 1
	# combined: pid 100 and tid 200 exclude each other: nothing left
	model_check --pid 100 --tid 200 || return 1
	[ "$(json_field total "$(cat out)")" -eq 0 ] || die "pid+tid not ANDed"
}

test_report_filter_comm() {
	gen_model || return 1
	# "worker" is two threads of pid 100 and one of pid 200
	model_check --comm worker || return 1
	model_check --comm worker --pid 200 || return 1
	model_check --comm batch,server
}

test_report_filter_dso_by_path_or_file_name() {
	gen_model || return 1
	model_check --dso /m/bin/batch || return 1
	model_check --dso libc.so.6 || return 1
	model_check --dso '[kernel.kallsyms]' || return 1
	model_check --dso server,batch
}

test_report_filter_time_window_from_first_sample() {
	gen_model || return 1
	model_check --time 0.5,1.2 || return 1
	model_check --time 1, || return 1
	model_check --time ,0.25 || return 1
	model_check --time 0,0 || return 1
	[ "$(json_field total "$(cat out)")" -eq 0 ] || die "empty window counted"
}

test_report_kernel_and_user_frames_only() {
	gen_model || return 1
	model_check --kernel || return 1
	model_check --user || return 1
	model_check --user --comm worker --time 0.2,2
}

test_report_sort_keys_combine() {
	gen_model || return 1
	model_check --sort comm || return 1
	model_check --sort pid,tid || return 1
	model_check --sort dso || return 1
	model_check --sort comm,dso,sym --by total || return 1
	model_check --sort tid,sym --kernel
}

test_report_sort_table_has_key_columns() {
	gen_model || return 1
	expect_rc 0 "$SP" report model.spulse --sort comm,pid,sym --top 0 || return 1
	head -n 1 out | grep -q 'rows by comm,pid,sym, sorted by self$' ||
		die "header: $(head -n 1 out)" || return 1
	sed -n 2p out | grep -q 'total  comm  *pid  function \[module\]$' ||
		die "column header: $(sed -n 2p out)" || return 1
	# the table's rows are the JSON rows (comm pid function per line)
	awk 'NR > 2 {print $5, $6, $7}' out | sort >table.txt
	"$SP" report model.spulse --sort comm,pid,sym --top 0 --json |
		python3 -c 'import json,sys
for r in json.load(sys.stdin)["rows"]: print(r["comm"], r["pid"], r["function"].split(" ")[0])' |
		sort >json.txt
	diff table.txt json.txt || die "table and JSON rows differ"
}

test_report_percent_limit_drops_small_rows() {
	local total n
	gen_model || return 1
	expect_rc 0 "$SP" report model.spulse --json --top 0 || return 1
	total=$(json_field total "$(cat out)")
	n=$(python3 -c 'import json,sys
d = json.load(open("out"))
print(sum(1 for r in d["rows"] if 100.0 * r["self"] / d["total"] >= 2.5))')
	expect_rc 0 "$SP" report model.spulse --json --top 0 --percent-limit 2.5 ||
		return 1
	python3 -c 'import json,sys
d = json.load(open("out"))
assert len(d["rows"]) == '"$n"', (len(d["rows"]), '"$n"')
assert all(100.0 * r["self"] / d["total"] >= 2.5 for r in d["rows"])
assert d["total"] == '"$total"'' || die "--percent-limit 2.5 rows" || return 1
	expect_rc 0 "$SP" report model.spulse --percent-limit 2.5 --top 0 || return 1
	[ "$(awk 'NR > 2' out | wc -l)" -eq "$n" ] || die "table rows != $n" || return 1
	head -n 1 out | grep -q 'rows >= 2.5%' || die "header lacks the limit"
}

test_report_filter_bad_values_exit_2() {
	gen_model || return 1
	expect_rc 2 "$SP" report model.spulse --time 3,1 || return 1
	grep -q 'END is before START' err || die "no reason for 3,1" || return 1
	expect_rc 2 "$SP" report model.spulse --time soon || return 1
	expect_rc 2 "$SP" report model.spulse --time 1 || return 1
	expect_rc 2 "$SP" report model.spulse --tid abc || return 1
	expect_rc 2 "$SP" report model.spulse --tid 1,,2 || return 1
	expect_rc 2 "$SP" report model.spulse --comm '' || return 1
	expect_rc 2 "$SP" report model.spulse --kernel --user || return 1
	expect_rc 2 "$SP" report model.spulse --sort sym,colour || return 1
	grep -q "unknown key 'colour'" err || die "bad key not named" || return 1
	expect_rc 2 "$SP" report model.spulse --percent-limit 101 || return 1
	expect_rc 2 "$SP" report model.spulse -g sideways || return 1
	expect_rc 2 "$SP" report model.spulse -g caller,x || return 1
	expect_rc 2 "$SP" flame model.spulse --root colour || return 1
	expect_rc 2 "$SP" flame --diff model.spulse || return 1
	expect_rc 2 "$SP" diff model.spulse || return 1
	expect_rc 2 "$SP" diff model.spulse model.spulse --by size
}

test_report_offcpu_filters_tid_and_time() {
	build_offcpu || return 1
	# worker/101: I3 (D, 10.5 ms) and I6 (S, 1.5 ms)
	expect_rc 0 "$SP" report off.spulse --off-cpu --tid 101 --json --top 0 ||
		return 1
	[ "$(json_field total "$(cat out)")" -eq 12000000 ] ||
		die "tid 101: $(cat out)" || return 1
	# time origin = first sample (1 us); [0.05 s, 0.125 s) holds I2, I3, I4
	expect_rc 0 "$SP" report off.spulse --off-cpu --time 0.05,0.125 --json ||
		return 1
	[ "$(json_field total "$(cat out)")" -eq 35500000 ] ||
		die "time window: $(cat out)" || return 1
	# --comm other: I5 only (4 ms)
	expect_rc 0 "$SP" report off.spulse --off-cpu --comm other --json || return 1
	[ "$(json_field total "$(cat out)")" -eq 4000000 ] || die "comm: $(cat out)"
}

test_latency_takes_report_filters() {
	build_offcpu || return 1
	expect_rc 0 "$SP" latency off.spulse --tid 101 --json || return 1
	[ "$(json_field intervals "$(cat out)")" -eq 2 ] || die "tid: $(cat out)" ||
		return 1
	expect_rc 0 "$SP" latency off.spulse --time 0.05,0.125 --json || return 1
	[ "$(json_field intervals "$(cat out)")" -eq 3 ] || die "time: $(cat out)" ||
		return 1
	# --kernel: the longest-wait stacks keep only kernel frames
	expect_rc 0 "$SP" latency off.spulse --kernel --top 1 || return 1
	grep -q 'stack: schedule <- futex_wait$' out || die "$(cat out)" || return 1
	! grep -q 'known_alpha_leaf' out || die "user frame with --kernel"
}

test_report_offcpu_sort_by_thread_and_graph() {
	build_offcpu || return 1
	# per thread: known/100 I1+I2+I4 = 75.1 ms, worker/101 12 ms, other 4 ms
	expect_rc 0 "$SP" report off.spulse --off-cpu --sort comm,tid --json ||
		return 1
	json_check out 'j["unit"] == "ns" and j["total"] == 91100000' \
		'[(r["comm"], r["tid"], r["self"], r["total"]) for r in j["rows"]] == [("known", 100, 75100000, 75100000), ("worker", 101, 12000000, 12000000), ("other", 201, 4000000, 4000000)]' ||
		die "per-thread off-CPU rows: $(cat out)" || return 1
	# schedule's callers: futex_wait 73.1 ms (80.24%), io_schedule 4 ms
	# (--sched-leaf: schedule is the top self row)
	expect_rc 0 "$SP" report off.spulse --off-cpu --sched-leaf -g callee \
		--top 1 || return 1
	grep -q -- '|--80.24%--futex_wait$' out && grep -q -- '|--4.39%--io_schedule$' out ||
		die "off-CPU graph: $(cat out)"
}
