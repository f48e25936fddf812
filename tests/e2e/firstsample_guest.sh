# Guest side of the first-sample suite (busybox sh in the stock-kernel VM,
# docs/VM.md; started by tests/e2e/firstsample_run.sh). One boot, asserts
# nothing: every run leaves its spool, truth and logs in /out/CASE/ for
# tests/e2e/firstsample_check.py.
#
#   dyn-nofp, dyn-fp,        spulse record --off-cpu -- wrapinj-* (the
#   static-fp, static-nofp   first case with an empty table cache)
#   clock                    spulse record -- clockloop CLOCK_SECS
#   dlwait                   spulse record -- dlwait: dlopen'ed libraries'
#                            wait for their table, measured by the process
#   notable                  spulse record -- fpspin CLOCK_SECS without the
#                            ptrace hold (SPULSE_RECORD_NO_PTRACE=1): the
#                            command runs before its map set; the module's
#                            stats are copied while it runs (the last copy
#                            taken before the module left is
#                            /out/notable/stats)
#   demo                     spulse record --off-cpu -- gt CLOCK_SECS (the
#                            demo workload), for flame vs report
#
# usage (via run-vm.sh): firstsample_guest.sh BIN
. "$VM_LIB"
BIN=$1
KO=$BIN/spulse.ko
C=/tmp/fs-cache
. /out/params
rm -rf "/host$C"

log() { echo "first-sample: $*"; }

# rec CASE ARGS...: spulse record into /out/CASE/spulse.spulse
rec() {
	c=$1; shift
	mkdir -p /out/$c
	hrun env SPULSE_UNWIND_TRACE=1 "$BIN/spulse" record --module "$KO" \
		-F "$FREQ" --unwind-cache "$C" -o "$VM_OUT_HOST/$c/spulse.spulse" \
		"$@" > /out/$c/record.log 2>&1
	echo $? > /out/$c/record.rc
}

t0=$(date +%s)
for v in dyn-nofp static-fp static-nofp dyn-fp; do
	log "$v"
	mkdir -p /out/$v
	rec $v --off-cpu -- "$BIN/wrapinj-$v" -n "$ROUNDS" -o "$VM_OUT_HOST/$v/truth.json"
done
log "clock"
rec clock -- "$BIN/clockloop" "$CLOCK_SECS"
log "dlwait"
rec dlwait -- "$BIN/dlwait" "$BIN/libdlwait.so" /tmp "$DL_N"
log "notable"
mkdir -p /out/notable
rm -f /tmp/notable.done
(
	while [ ! -e /tmp/notable.done ]; do
		# every readable copy: the cut counters stop moving once the
		# tables are in, and the module may be gone before a copy
		# that says target_exited 1 is taken (CI missed that window)
		if hrun cat /sys/kernel/debug/spulse/stats > /tmp/notable.st 2>/dev/null &&
			grep -q '^ustack_truncated ' /tmp/notable.st; then
			cp /tmp/notable.st /out/notable/stats
		fi
		sleep 0.05
	done
) &
export SPULSE_RECORD_NO_PTRACE=1
rec notable -- "$BIN/fpspin" "$CLOCK_SECS"
unset SPULSE_RECORD_NO_PTRACE
touch /tmp/notable.done
wait
log "demo"
rec demo --off-cpu -- "$BIN/gt" "$CLOCK_SECS"
log "done in $(( $(date +%s) - t0 )) s"
