# report against perf itself: a program built here recorded by `perf
# record -e cpu-clock -g` on this host, every sample of `perf script`
# converted into a spool (module-relative frames through the recorded
# mmaps, kernel frames with /proc/kallsyms as the sidecar), then spulse's
# self% per function must equal `perf report --stdio --no-children --sort
# sym`'s. Defined only where perf can record (root, or a permissive
# perf_event_paranoid); run.sh notes it otherwise.

perf_to_spool() {
	python3 - "$1" <<'PY'
import re, subprocess, sys
data = sys.argv[1]
out = subprocess.run(["perf", "script", "-i", data, "--show-mmap-events",
                      "-F", "comm,pid,tid,ip,sym,dso"],
                     capture_output=True, text=True, check=True).stdout
maps = {}   # path -> (vaddr -> file offset function)
def loads(path):
    segs = []
    try:
        txt = subprocess.run(["readelf", "-lW", path], capture_output=True,
                             text=True).stdout
    except OSError:
        return segs
    for l in txt.splitlines():
        p = l.split()
        if p and p[0] == "LOAD":
            segs.append((int(p[1], 16), int(p[2], 16), int(p[5], 16)))
    return segs
lines = ["# header start_us=1000000 interval_us=1000"]
mods, frames, stacks, threads = {}, {}, {}, {}
def module(path, pid):
    if (path, pid) not in mods:
        mid = len(mods)
        mods[(path, pid)] = mid
        lines.append("module id=%d pid=%d start=0x%x end=0x%x file_offset=0x0 path=%s build_id="
                     % (mid, pid, 0x100000000 * (mid + 1), 0x100000000 * (mid + 1) + 0x40000000, path))
    return mods[(path, pid)]
def frame(key, text):
    if key not in frames:
        frames[key] = len(frames)
        lines.append("frame id=%d %s" % (frames[key], text))
    return frames[key]
def stack(path):
    parent = "root"
    for d in range(1, len(path) + 1):
        k = tuple(path[:d])
        if k not in stacks:
            stacks[k] = len(stacks)
            lines.append("stack id=%d parent=%s frame=%d" % (stacks[k], parent, path[d - 1]))
        parent = str(stacks[k])
    return stacks[tuple(path)]
n = 0
for block in out.split("\n\n"):
    # mmap event lines may precede a sample without a blank line
    rows = [l for l in block.split("\n") if l.strip() and "PERF_RECORD" not in l]
    if not rows:
        continue
    head = re.match(r"\s*(\S+)\s+(\d+)/(\d+)", rows[0])
    if not head:
        continue
    comm, pid, tid = head.group(1), int(head.group(2)), int(head.group(3))
    if (pid, tid) not in threads:
        threads[(pid, tid)] = len(threads)
        lines.append("thread id=%d pid=%d tid=%d comm=%s" % (threads[(pid, tid)], pid, tid, comm))
    chain = []
    for l in rows[1:]:
        m = re.match(r"\s*([0-9a-f]+) .*\((.*)\)\s*$", l)
        if not m:
            continue
        ip, dso = int(m.group(1), 16), m.group(2)
        if dso == "[kernel.kallsyms]":
            chain.append(frame(("k", ip), "kind=kernel addr=0x%x" % ip))
        elif dso.startswith("/"):
            if dso not in maps:
                maps[dso] = loads(dso)
            off = next((ip - v + o for o, v, sz in maps[dso] if v <= ip < v + sz), None)
            if off is None:
                continue
            mid = module(dso, pid)
            chain.append(frame(("m", mid, off), "kind=module module=%d rel=0x%x" % (mid, off)))
        else:
            chain.append(frame(("u", ip), "kind=user addr=0x%x" % (ip | 1 << 47)))
    if not chain:
        continue
    lines.append("sample dt_ns=1000 thread=%d stack=%d" % (threads[(pid, tid)], stack(chain[::-1])))
    n += 1
open("perf.txt", "w").write("\n".join(lines) + "\n")
print(n)
PY
}

if command -v perf >/dev/null &&
	perf record -q -e cpu-clock -o "${TMPDIR:-/tmp}/spulse-perf-probe.$$" true \
		>/dev/null 2>&1; then
	rm -f "${TMPDIR:-/tmp}/spulse-perf-probe.$$"

test_report_self_percent_equals_perf_report() {
	local n
	cat >hot.c <<'EOT'
#include <stdlib.h>
#include <time.h>
volatile unsigned long sink;
__attribute__((noinline)) void hot_a(int n) { for (int i = 0; i < n; i++) sink += i * 7; }
__attribute__((noinline)) void hot_b(int n) { for (int i = 0; i < n; i++) sink ^= i * 13; hot_a(n / 4); }
__attribute__((noinline)) void hot_c(int n) { for (int i = 0; i < n; i++) sink += i % 5; }
static double cpu_s(void) {
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
/* runs until it has used SECONDS of CPU: cpu-clock samples at -F 999 then
 * number about 999 x SECONDS however fast or loaded the machine is */
int main(int argc, char **argv) {
	double secs = argc > 1 ? atof(argv[1]) : 0.6;
	do
		for (int k = 0; k < 16; k++) { hot_a(20000); hot_b(30000); hot_c(10000); }
	while (cpu_s() < secs);
	return 0;
}
EOT
	$CC -O1 -g -fno-omit-frame-pointer -o hot hot.c || return 1
	# sized by CPU time, not by loop count: 2500 rounds gave only 100
	# samples on a fast host
	perf record -q -e cpu-clock -F 999 -g -o p.data ./hot 0.6 >/dev/null 2>&1 ||
		die "perf record failed" || return 1
	n=$(perf_to_spool p.data) || die "perf script conversion" || return 1
	[ "$n" -gt 300 ] || die "only $n samples recorded (0.6 s of CPU at 999 Hz)" || return 1
	"$SPOOLGEN" <perf.txt >p.spulse || return 1
	cp /proc/kallsyms p.spulse.kallsyms
	expect_rc 0 "$SP" report p.spulse --json --top 0 || return 1
	perf report -i p.data --stdio --no-children --sort sym 2>/dev/null >perf.out
	python3 - "$n" <<'PY' || die "self% differs from perf report"
import json, re, sys
n = int(sys.argv[1])
d = json.load(open("out"))
assert d["total"] == n, (d["total"], n)
ours = {}
for r in d["rows"]:
    ours[r["function"]] = ours.get(r["function"], 0) + 100.0 * r["self"] / d["total"]
perf = {}
for l in open("perf.out"):
    m = re.match(r"\s+([0-9.]+)%\s+\[[.k]\]\s+(\S+)\s*$", l)
    if m:
        perf[m.group(2)] = float(m.group(1))
hot = [f for f in ("hot_a", "hot_b", "hot_c") if f in perf]
assert len(hot) == 3, perf
for f, p in perf.items():
    if p >= 1.0 or f in hot:
        assert abs(ours.get(f, 0) - p) <= 0.011, (f, ours.get(f), p)
print({f: (round(ours[f], 2), perf[f]) for f in hot})
PY
}

else
	echo "note: report vs perf test not run (perf cannot record here)" >&2
fi
