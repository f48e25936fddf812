#!/usr/bin/env bash
# Host side of suite kmod-vm-target: assert what tests/kmod/vm-target.sh left in
# DIR (and, with LOCKDIR, what the lockdown=integrity boot left there).
# One line per check; exit 1 if any failed.
# usage: vm-target-check.sh DIR SPULSE_BIN [LOCKDIR]
set -u
d=$1
spulse=$2
ld=${3:-}
log=$d/guest.log
dm=$d/tg.dmesg
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "PASS $1"; }
no() { fail=$((fail + 1)); echo "FAIL $1${2:+: $2}"; }
check() { if eval "$2"; then ok "$1"; else no "$1"; fi; }
key() { awk -v k="$2" '$1 == k { print $2 }' "$1" 2>/dev/null; }
# "pid comm" of every thread record of the streams PREFIX.cpu*
threads() {
	for f in "$d/$1".cpu*; do
		[ -s "$f" ] && "$spulse" dump "$f"
	done | sed -n 's/^thread id=[0-9]* pid=\([0-9]*\) tid=[0-9]* comm=\(.*\)$/\1 \2/p' |
		sort -u
}
streams_valid() {
	local f
	for f in "$d/$1".cpu*; do
		[ -s "$f" ] || continue
		"$spulse" check "$f" >/dev/null 2>&1 || return 1
	done
}

# 0. parameters refused with one reason line each
for p in $(sed -n 's/^tg badparam \([^ ]*\) rc=.*/\1/p' "$log"); do
	check "refused $p" "grep -q '^tg badparam $p rc=[1-9][0-9]* loaded=no$' '$log'"
	case $p in
	target_pid=*) why="spulse: invalid ${p}: a thread, not a process" ;;
	*) why="spulse: invalid parameters: ${p%%=*} must be" ;;
	esac
	check "one reason line for $p" "[ \$(grep -c '$why' '$dm') -eq 1 ]"
done
check "three bad parameters tried" "[ \$(grep -c '^tg badparam ' '$log') -eq 3 ]"

# 1. the target exits
gt=$(sed -n 's/^tg exit reuse pid \([0-9]*\) got .*/\1/p' "$log")
got=$(sed -n 's/^tg exit reuse pid [0-9]* got \([0-9]*\)$/\1/p' "$log")
s1=$d/tg.exit.stats s2=$d/tg.exit.stats2
check "exit: insmod target_pid" "grep -q '^tg exit insmod rc=0$' '$log'"
check "exit: control reads stopped" "grep -q '^tg exit control: stopped$' '$log'"
check "exit: stats state stopped, target_exited 1" \
	"[ '$(key "$s1" state)' = stopped ] && [ '$(key "$s1" target_exited)' = 1 ]"
check "exit: samples were taken before ($(key "$s1" samples_written))" \
	"[ '$(key "$s1" samples_written)' -gt 0 ]"
check "exit: one dmesg line 'target_pid=$gt exited'" \
	"[ \$(grep -c 'spulse: target_pid=$gt exited: sampling stopped' '$dm') -eq 1 ]"
check "exit: start refused after the target exited" \
	"grep -q '^tg exit restart rc=[1-9][0-9]*$' '$log'"
check "exit: a new process got pid $gt (ns_last_pid)" "[ -n '$gt' ] && [ '$got' = '$gt' ]"
check "exit: nothing sampled after (taken $(key "$s1" samples_taken) -> $(key "$s2" samples_taken))" \
	"[ '$(key "$s1" samples_taken)' = '$(key "$s2" samples_taken)' ]"
t=$(threads tg.exit)
check "exit: every thread recorded is gt's (${t//$'\n'/, })" \
	"[ -n \"\$t\" ] && ! printf '%s\n' \"\$t\" | grep -qv '^$gt gt$'"
check "exit: streams valid" "streams_valid tg.exit"

# 2. target_pid named inside a child pid namespace
read -r _ _ _ v _ G <<< "$(grep '^tg ns vpid ' "$log")"
check "ns: insmod inside the namespace" "grep -q '^tg ns insmod rc=0$' '$log'"
check "ns: gt is pid ${v:-?} there, tgid ${G:-?} globally" \
	"[ -n '${G:-}' ] && [ -n '${v:-}' ] && [ '${G:-}' != '${v:-}' ]"
check "ns: dmesg names the global tgid" \
	"grep -q \"spulse: target_pid=${v:-x} in the loader's pid namespace is tgid ${G:-x}\$\" '$dm'"
check "ns: stats target_pid is the global tgid" \
	"[ '$(key "$d/tg.ns.stats" target_pid)' = '${G:-x}' ]"
check "ns: samples written ($(key "$d/tg.ns.stats" samples_written))" \
	"[ '$(key "$d/tg.ns.stats" samples_written)' -gt 0 ]"
t=$(threads tg.ns)
check "ns: every thread recorded is gt, tgid ${G:-?} (${t//$'\n'/, })" \
	"[ -n \"\$t\" ] && ! printf '%s\n' \"\$t\" | grep -qv '^${G:-x} gt$'"
check "ns: streams valid" "streams_valid tg.ns"
check "ns: meta has gt's modules (tgid ${G:-?})" \
	"'$spulse' dump '$d/tg.ns.meta' | grep -q 'pid=${G:-x} .*path=.*/workload/gt'"
check "ns: a stop from inside the namespace does not retire the live target" \
	"! '$spulse' dump '$d/tg.ns.meta' | grep -q '^process-deactivate pid=${G:-x}\$'"

# 3. the same number in a child pid namespace is another process
gt=$(sed -n 's/^tg same child-ns pid \([0-9]*\)$/\1/p' "$log")
check "same: insmod target_pid" "grep -q '^tg same insmod rc=0$' '$log'"
check "same: the child-ns process has the target's number (${gt:-?})" \
	"[ -n '$gt' ] && [ '$(key "$d/tg.same.stats" target_pid)' = '$gt' ]"
check "same: samples written ($(key "$d/tg.same.stats" samples_written))" \
	"[ '$(key "$d/tg.same.stats" samples_written)' -gt 0 ]"
t=$(threads tg.same)
check "same: every thread recorded is gt's (${t//$'\n'/, })" \
	"[ -n \"\$t\" ] && ! printf '%s\n' \"\$t\" | grep -qv '^${gt:-x} gt$'"
check "same: streams valid" "streams_valid tg.same"

# 4. lockdown raised at run time
check "lock: insmod before lockdown" "grep -q '^tg lock insmod rc=0$' '$log'"
check "lock: raised to integrity" \
	"grep -q '^tg lock raise rc=0$' '$log' && grep -q '^tg lock after: .*\[integrity\]' '$log'"
for f in control cpu0 meta; do
	check "lock: debugfs refuses $f" "grep -q '^tg lock $f rc=[1-9][0-9]*$' '$log'"
done
check "lock: stats readable, debugfs_locked_down 1" \
	"grep -q '^tg lock stats rc=0$' '$log' && [ '$(key "$d/tg.lock.stats" debugfs_locked_down)' = 1 ]"
check "lock: rmmod" "grep -q '^tg lock rmmod rc=0$' '$log'"
check "lock: unsigned reload refused by the kernel" \
	"grep -q '^tg lock reload rc=[1-9][0-9]*$' '$log' && grep -q 'Lockdown: insmod: unsigned module loading is restricted' '$dm'"
check "no WARN/BUG/sleeping function in dmesg" \
	"[ -s '$dm' ] && ! grep -Eq 'WARNING|BUG|sleeping function' '$dm'"

# 5. booted with lockdown=integrity
if [ -n "$ld" ]; then
	check "lockdown boot: the guest boots locked down" \
		"grep -q '^tg boot lockdown: .*\[integrity\]' '$ld/guest.log'"
	check "lockdown boot: spulse.ko (unsigned) refused" \
		"grep -q '^tg boot insmod rc=[1-9][0-9]*$' '$ld/guest.log' && grep -q 'Lockdown: insmod: unsigned module loading is restricted' '$ld/dmesg.txt'"
fi
echo "kmod-vm-target: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
