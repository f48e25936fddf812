# Guest side of make bench-unwind (bench/vm/unwind_run.sh). Results go to
# /out/runs/ for bench/vm/unwind_table.py. usage: unwind_guest.sh BIN
. "$VM_LIB"
BIN=$1
KO=$BIN/spulse.ko
D=/sys/kernel/debug/spulse
# pre-built tables in the guest's tmpfs (9p reads are slow under TCG)
rm -rf /host/tmp/unwind-cache
cp -r /out/cache /host/tmp/unwind-cache
C=/tmp/unwind-cache
R=/out/runs
. /out/params	# REPS FREQ

snap() { cat $D/stats > "$1" 2>/dev/null; }

# handler: gt (frame pointers, 6 s of work after 1.5 s) under unwind=MODE;
# stats a = once sampling runs (tables: once gt's set is mapped,
# unwind_processes >= 1) + 0.3 s, b = 2.5 s later
handler_run() {
	mode=$1; rep=$2
	chroot /host "$BIN/gt" -s 1.5 6 > $R/gt.$mode.$rep.log 2>&1 &
	job=$!
	i=0
	while ! grep -q '^gt pid' $R/gt.$mode.$rep.log 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 300 ] || break
		sleep 0.05
	done
	pid=$(sed -n 's/^gt pid //p' $R/gt.$mode.$rep.log)
	hrun /sbin/insmod "$KO" target_pid=$pid freq=$FREQ unwind=$mode
	if [ "$mode" = fp ]; then tabs=--no-unwind-tables; else tabs="--unwind-cache $C"; fi
	chroot /host "$BIN/spulse-drain" --control $tabs -o /tmp/h.spulse \
		2> $R/drain.$mode.$rep.log &
	drain=$!
	i=0
	while [ $i -lt 100 ]; do
		if [ "$mode" = fp ]; then
			grep -q '^samples_taken [1-9]' $D/stats 2>/dev/null && break
		else
			grep -q '^unwind_processes [1-9]' $D/stats 2>/dev/null && break
		fi
		i=$((i + 1))
		sleep 0.1
	done
	sleep 0.3
	snap $R/h.$mode.$rep.a
	sleep 2.5
	snap $R/h.$mode.$rep.b
	wait $job
	kill -INT $drain; wait $drain
	hrun /sbin/rmmod spulse
}

# bytes/sample: nofp (no frame pointers) under spulse record vs perf dwarf
bytes_run() {
	tool=$1; rep=$2
	if [ "$tool" = spulse ]; then
		hrun "$BIN/spulse" record --module "$KO" -F $FREQ --unwind-cache "$C" \
			-o /tmp/b.spulse -- "$BIN/nofp" 3 > $R/b.spulse.$rep.log 2>&1
		ls -l /host/tmp/b.spulse | awk '{print "bytes", $5}' >> $R/b.spulse.$rep.log
	else
		hrun perf record -F $FREQ -e cpu-clock --call-graph dwarf --no-buildid-cache \
			-o /tmp/b.perf.data -- "$BIN/nofp" 3 > $R/b.perf.$rep.log 2>&1
		ls -l /host/tmp/b.perf.data | awk '{print "bytes", $5}' >> $R/b.perf.$rep.log
	fi
	rm -f /host/tmp/b.spulse /host/tmp/b.perf.data
}

# warm the page cache (the first start of a binary and its libraries over
# 9p takes seconds under TCG, longer than a run)
hrun "$BIN/spulse-drain" --help > /dev/null 2>&1
hrun "$BIN/spulse" record --help > /dev/null 2>&1
hrun /usr/bin/perf --version > /dev/null 2>&1
hrun "$BIN/gt" -n 1 > /dev/null 2>&1

rep=1
while [ $rep -le "$REPS" ]; do
	if [ $((rep % 2)) -eq 1 ]; then
		handler_run fp $rep; handler_run tables $rep
		bytes_run spulse $rep; bytes_run perf $rep
	else
		handler_run tables $rep; handler_run fp $rep
		bytes_run perf $rep; bytes_run spulse $rep
	fi
	rep=$((rep + 1))
done

# table memory of one process: python3 with its tables loaded
chroot /host /usr/bin/python3 "$BIN/unwind_work.py" 8 > $R/py.log 2>&1 &
job=$!
sleep 0.3
pid=$job
hrun /sbin/insmod "$KO" target_pid=$pid freq=$FREQ
chroot /host "$BIN/spulse-drain" --control --unwind-cache "$C" -o /tmp/p.spulse \
	2> $R/drain.py.log &
drain=$!
# until its set of tables stops growing (two reads 0.5 s apart agree)
prev=x; i=0
while [ $i -lt 20 ]; do
	sleep 0.5
	cur=$(sed -n 's/^unwind_tables //p' $D/stats 2>/dev/null)
	[ -n "$cur" ] && [ "$cur" != 0 ] && [ "$cur" = "$prev" ] && [ $i -ge 3 ] && break
	prev=$cur; i=$((i + 1))
done
snap $R/py.stats
cat $D/unwind > $R/py.unwind 2>/dev/null
wait $job
kill -INT $drain; wait $drain
hrun /sbin/rmmod spulse
dmesg > /out/dmesg.guest
exit 0
