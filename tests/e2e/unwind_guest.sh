# Guest side of the unwind-vm suite (busybox sh in the stock-kernel VM, see
# docs/VM.md; started by tests/e2e/unwind_run.sh). One boot. Asserts
# nothing: every run leaves its spool / perf.data / logs / exit codes in
# /out/CASE/ for the host checker tests/e2e/unwind_check.py.
#
#   py, xz, gzip, nofp   `spulse record` (unwind=auto, tables from the
#                        cache the host pre-built) and, right after it,
#                        `perf record --call-graph dwarf` of the same
#                        command: Debian's python3 running unwind_work.py,
#                        xz -9 and gzip -9 on a few MB, the nofp program
#   fp                   nofp under `spulse record --unwind fp` (no tables)
#   badsp                nofp -m badsp (rsp/rbp at garbage) with tables
#   refuse               nofp started from /out/h, then nofp-b (another
#                        build-id) bind-mounted over its path: the running
#                        process keeps its file, the path opens another;
#                        spulse record -p: the drainer must refuse that table
#   forced               insmod unwind=tables; unwind_poke loads nofp-b's
#                        table and maps it over the running nofp's text
#   lie                  unwind_poke loads lying tables (unwind_poke.c) for
#                        nofp, libnofp.so and libc and maps them (unwind=auto)
#   churn                unwind_poke ADDs/MAPs/DELs real tables every 10 ms
#                        while nofp is sampled (unwind=auto)
#
# usage (via run-vm.sh): unwind_guest.sh BIN
#   BIN: host path of the directory holding spulse.ko, spulse, spulse-drain,
#   nofp, libnofp.so, nofp-b, unwind_poke, unwind_work.py (under the VM
#   output directory: visible in the guest at the same path).
# Knobs: /out/params (FREQ PY_SECS NOFP_SECS XZ_MB GZ_MB), written by the
# host script.
. "$VM_LIB"
BIN=$1
KO=$BIN/spulse.ko
D=/sys/kernel/debug/spulse
U=$D/unwind
# the tables pre-built on the host, copied into the guest's tmpfs (/tmp in
# the chroot): reads there are whole and fast (9p is slow under TCG)
rm -rf /host/tmp/unwind-cache
cp -r /out/cache /host/tmp/unwind-cache
C=/tmp/unwind-cache
PY=/usr/bin/python3
. /out/params

log() { echo "unwind-vm: $*"; }

# rec CASE ARGS...: spulse record into /out/CASE/spulse.spulse
rec() {
	c=$1; shift
	mkdir -p /out/$c
	hrun "$BIN/spulse" record --module "$KO" -F "$FREQ" --unwind-cache "$C" \
		-o "$VM_OUT_HOST/$c/spulse.spulse" "$@" > /out/$c/record.log 2>&1
	echo $? > /out/$c/record.rc
}

# perfrec CASE CMD...: perf record --call-graph dwarf into /out/CASE/perf.data
perfrec() {
	c=$1; shift
	mkdir -p /out/$c
	hrun perf record -F "$FREQ" -e cpu-clock --call-graph dwarf \
		--no-buildid-cache -o "$VM_OUT_HOST/$c/perf.data" -- "$@" \
		> /out/$c/perf.log 2>&1
	echo $? > /out/$c/perf.rc
}

# text (r-x) mapping of FILE in PID: "START END PGOFF" (hex, no 0x), as
# the process (chrooted into /host) names its files
rx_map() {
	hrun awk -v f="$2" '$6 == f && $2 ~ /x/ { split($1, a, "-"); print a[1], a[2], $3; exit }' \
		/proc/$1/maps
}
# the chrooted process's libc path
libc_of() {
	hrun awk '$6 ~ /libc\.so/ && $2 ~ /x/ { print $6; exit }' /proc/$1/maps
}

# start_nofp CASE PATH ARGS...: nofp in the background, held until
# `go CASE`; sets $job and $pid
start_nofp() {
	c=$1; p=$2; shift 2
	mkdir -p /out/$c
	rm -f /out/$c/go
	# chroot itself (not the hrun function, whose subshell would be $!)
	chroot /host "$p" -g "$VM_OUT_HOST/$c/go" "$@" > /out/$c/nofp.log 2>&1 &
	job=$!
	i=0
	while ! grep -q '^nofp pid' /out/$c/nofp.log 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 300 ] || break
		sleep 0.05
	done
	pid=$(sed -n 's/^nofp pid //p' /out/$c/nofp.log)
	echo "$pid" > /out/$c/pid
}
go() { touch /out/$1/go; }

# insmod + spulse-drain (no tables of its own) around a started nofp
drain_start() {
	c=$1; shift
	hrun /sbin/insmod "$KO" target_pid=$pid freq=$FREQ "$@" 2> /out/$c/insmod.err
	echo $? > /out/$c/insmod.rc
	chroot /host "$BIN/spulse-drain" --control --no-unwind-tables \
		-o "$VM_OUT_HOST/$c/spulse.spulse" 2> /out/$c/drain.log &
	drain=$!
}
drain_stop() {
	c=$1
	kill -INT $drain 2>/dev/null
	wait $drain
	echo $? > /out/$c/drain.rc
	cat $D/stats > /out/$c/stats 2>/dev/null
	cat $U > /out/$c/unwind.txt 2>/dev/null
	hrun /sbin/rmmod spulse
	echo $? > /out/$c/rmmod.rc
}

t0=$(date +%s)
# data for xz and gzip in the guest tmpfs (the host root is read-only)
head -c $((XZ_MB * 1048576)) /out/data.txt > /host/tmp/xz.txt
: > /host/tmp/gz.txt
i=0
while [ $i -lt "$GZ_MB" ]; do
	head -c 1048576 /out/data.txt >> /host/tmp/gz.txt
	i=$((i + 1))
done

log "py"
rec py -- $PY "$BIN/unwind_work.py" "$PY_SECS"
perfrec py $PY "$BIN/unwind_work.py" "$PY_SECS"
log "xz"
rec xz -- xz -9 -T1 -k -f /tmp/xz.txt
perfrec xz xz -9 -T1 -k -f /tmp/xz.txt
log "gzip"
rec gzip -- gzip -9 -k -f /tmp/gz.txt
perfrec gzip gzip -9 -k -f /tmp/gz.txt
log "nofp"
rec nofp -- "$BIN/nofp" "$NOFP_SECS"
perfrec nofp "$BIN/nofp" "$NOFP_SECS"
log "fp"
rec fp --unwind fp -- "$BIN/nofp" 3
log "badsp"
rec badsp -- "$BIN/nofp" -m badsp 4

log "refuse"
mkdir -p /out/h
cp "/host$BIN/nofp" "/host$BIN/libnofp.so" /out/h/
start_nofp refuse "$VM_OUT_HOST/h/nofp" 5
# the running nofp keeps its file; its path now opens nofp-b
mount -o bind "/host$BIN/nofp-b" "/host$VM_OUT_HOST/h/nofp"
echo $? > /out/refuse/bind.rc
(sleep 2; go refuse) &
rec refuse -p "$pid"
wait $job
umount "/host$VM_OUT_HOST/h/nofp"

log "forced"
start_nofp forced "$BIN/nofp" 4
set -- $(rx_map "$pid" "$BIN/nofp")
drain_start forced unwind=tables
hrun "$BIN/unwind_poke" add $U 901 "$BIN/nofp-b" > /out/forced/poke.log 2>&1
hrun "$BIN/unwind_poke" map $U "$pid" 901 "$BIN/nofp-b" "$1" "$2" "$3" >> /out/forced/poke.log 2>&1
go forced
wait $job
drain_stop forced

log "lie"
start_nofp lie "$BIN/nofp" 4
LC=$(libc_of "$pid")
set -- $(rx_map "$pid" "$BIN/nofp") $(rx_map "$pid" "$BIN/libnofp.so") $(rx_map "$pid" "$LC")
drain_start lie
{
	hrun "$BIN/unwind_poke" lie $U 902 "$BIN/nofp"
	hrun "$BIN/unwind_poke" lie $U 903 "$BIN/libnofp.so"
	hrun "$BIN/unwind_poke" lie $U 904 "$LC"
	hrun "$BIN/unwind_poke" map $U "$pid" 902 "$BIN/nofp" "$1" "$2" "$3" \
		903 "$BIN/libnofp.so" "$4" "$5" "$6" 904 "$LC" "$7" "$8" "$9"
} > /out/lie/poke.log 2>&1
go lie
wait $job
drain_stop lie

log "churn"
start_nofp churn "$BIN/nofp" 5
LC=$(libc_of "$pid")
set -- $(rx_map "$pid" "$BIN/nofp") $(rx_map "$pid" "$BIN/libnofp.so") $(rx_map "$pid" "$LC")
drain_start churn
go churn
hrun "$BIN/unwind_poke" churn $U "$pid" 4 910 "$BIN/nofp" "$1" "$2" "$3" \
	"$BIN/libnofp.so" "$4" "$5" "$6" "$LC" "$7" "$8" "$9" > /out/churn/poke.log 2>&1
wait $job
drain_stop churn

log "done in $(( $(date +%s) - t0 )) s"
dmesg > /out/dmesg.guest
exit 0
