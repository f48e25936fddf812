#!/usr/bin/env bash
# Host side of the kernel matrix: judge what tests/kernels/guest-essentials.sh
# left in DIR (a run-vm.sh --out directory). Prints one line per check,
# "ok NAME: detail" or "FAIL NAME: detail", with NAME one of the matrix
# columns load, sample, off-CPU, unwind, flight, rmmod (a column passes when
# all its checks pass). Exit 1 when any check failed.
# usage: essentials-check.sh DIR SPULSE_BIN
set -uo pipefail
d=$1
spulse=$2
log=$d/guest.log
failed=0
res() { # res NAME OK(0/1) DETAIL
	if [ "$2" = 0 ]; then echo "ok $1: $3"; else echo "FAIL $1: $3"; failed=1; fi
}
has() { grep -q "^ess: $1\$" "$log" 2>/dev/null; }
stat() { awk -v k="$2" '$1 == k { print $2 }' "$d/$1" 2>/dev/null; }
json_n() { sed -n "s/.*\"$2\":\\([0-9]*\\).*/\\1/p" <<<"$1"; }

# load
has 'load rc=0' && has 'debugfs present'
res load $? "insmod (no parameters) and its debugfs directory"

# sample: valid spool with samples, the stats identity, the drain exact
j=$("$spulse" check --json "$d/sample.spulse" 2>&1)
ok=$?
ns=$(json_n "$j" samples)
t=$(stat sample.stats samples_taken)
w=$(stat sample.stats samples_written)
x=$(stat sample.stats samples_dropped)
[ $ok = 0 ] && has 'insmod sample rc=0' && has 'drain sample rc=0' &&
	[ "${ns:-0}" -gt 0 ] && [ "${t:-0}" -gt 0 ] && [ "$t" -eq $((w + x)) ]
res sample $? "gt: spool valid with ${ns:-?} samples; taken ${t:-?} = written ${w:-?} + dropped ${x:-?}"
[ -n "$ns" ] && [ "$ns" = "${w:-x}" ]
res sample $? "drain exact: spool samples ${ns:-?} = module's samples_written ${w:-?}"

# unwind: gt's whole frame-pointer chain, and a read(2) stack that goes on
# into the kernel (mixed user + kernel stack)
"$spulse" export "$d/sample.spulse" --format folded > "$d/sample.folded" 2> "$d/sample.folded.err"
chain='main;gt_m01;gt_m02;gt_m03;gt_m04;gt_m05;gt_m06;gt_m07;gt_m08;gt_m09;gt_m10;gt_leaf;gt_burn'
n=$(grep -c "$chain" "$d/sample.folded")
res unwind "$([ "$n" -gt 0 ]; echo $?)" "user stacks main..gt_m10;gt_leaf;gt_burn: $n"
n=$(grep -Ec 'gt_sys_read;[^ ]+' "$d/sample.folded")
k=$(grep -Eo 'gt_sys_read;[^; ]+' "$d/sample.folded" | sort | uniq -c | sort -rn | head -n1 | awk '{print $2}')
res unwind "$([ "$n" -gt 0 ]; echo $?)" "mixed stacks (gt_sys_read -> kernel): $n${k:+, e.g. $k}"

# off-CPU: pingpong's threads sleep in read (state S), woken by each other;
# a preempted thread (R) has neither waker nor blocked time (a sleep taken
# for a preemption, or the reverse, shows here)
j=$("$spulse" check --json "$d/offcpu.spulse" 2>&1)
ok=$?
no=$(json_n "$j" offcpu)
ow=$(stat offcpu.stats offcpu_written)
[ $ok = 0 ] && has 'insmod offcpu rc=0' && has 'drain offcpu rc=0' && has 'pingpong rc=0' &&
	[ "${no:-0}" -gt 0 ] && [ "$no" = "$ow" ]
res off-CPU $? "pingpong: spool valid, ${no:-?} intervals = module's offcpu_written ${ow:-?}"
r=$("$spulse" dump "$d/offcpu.spulse" 2>/dev/null | python3 -c '
import sys
thr, iv = {}, []
for line in sys.stdin:
    w = line.split()
    if not w:
        continue
    f = dict(x.split("=", 1) for x in w[1:] if "=" in x)
    if w[0] == "thread":
        thr[f.get("id")] = (f.get("pid"), f.get("tid"))
    elif w[0] == "offcpu":
        iv.append(f)
s = [r for r in iv if r.get("state") == "S"]
wk = [r for r in s if r.get("waker", "none") != "none"]
other = [r for r in wk if r["waker"] in thr and r["thread"] in thr and
         thr[r["waker"]][0] == thr[r["thread"]][0] and
         thr[r["waker"]][1] != thr[r["thread"]][1]]
rbad = [r for r in iv if r.get("state") == "R" and
        (r.get("waker", "none") != "none" or r.get("blocked_ns", "0") != "0")]
states = {}
for r in iv:
    states[r.get("state")] = states.get(r.get("state"), 0) + 1
print(len(iv), len(s), len(wk), len(other), len(rbad),
      ",".join("%s:%d" % kv for kv in sorted(states.items())))
')
read -r ni ns nw no nr st <<<"$r"
[ "${ns:-0}" -ge 100 ] && [ $((nw * 10)) -ge $((ns * 9)) ] &&
	[ $((no * 10)) -ge $((nw * 9)) ] && [ "$nr" = 0 ]
res off-CPU $? "states ${st:-?}: ${ns:-?} of ${ni:-?} are S (want >= 100), ${nw:-?} of them with a waker (>= 90%), ${no:-?} woken by the other thread (>= 90%); R with a waker or blocked time: ${nr:-?} (want 0)"

# flight: spulse record --flight, two dumps (manual, then SIGUSR1)
fr=1
if has 'flight rc=0' && [ -f "$d/fl-001.spulse" ] && [ -f "$d/fl-002.spulse" ] &&
	[ ! -e "$d/fl-003.spulse" ]; then
	fr=0
	for i in 001 002; do
		j=$("$spulse" check --json "$d/fl-$i.spulse" 2>&1) || fr=1
		[ "$(json_n "$j" triggers)" -gt 0 ] 2>/dev/null || fr=1
		[ "$(json_n "$j" samples)" -gt 0 ] 2>/dev/null || fr=1
	done
fi
frc=$(sed -n 's/^ess: flight rc=//p' "$log")
res flight $fr "spulse record --flight (want rc 0, exactly fl-001 and fl-002, valid with samples and a trigger): rc ${frc:-none (guest died?)}, dumps: $(cd "$d" && find . -maxdepth 1 -name 'fl-0*.spulse' | sed 's|^\./||' | sort | tr '\n' ' ')"

# rmmod and dmesg
n=$(grep -c '^ess: rmmod .* rc=0$' "$log")
[ "$n" -eq 3 ] && has 'unloaded after record'
res rmmod $? "unloads: $n of 3 rmmod rc=0, spulse record's unload: $(grep -q '^ess: unloaded after record$' "$log" && echo 'done' || echo 'not done')"
bad=$(grep -E 'WARNING|BUG|Oops|sleeping function|Call Trace|general protection' "$d/ess.dmesg" 2>/dev/null | head -n3)
res rmmod "$([ -z "$bad" ] && [ -s "$d/ess.dmesg" ]; echo $?)" "dmesg free of WARN/BUG/Oops$([ -s "$d/ess.dmesg" ] || echo ': no dmesg saved (guest died?)')${bad:+: $bad}"
exit $failed
