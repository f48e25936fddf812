#!/bin/sh
# Guest side of suite lockdown, boot 1 (tests/lockdown/run.sh): one session
# of spulse.ko read first through debugfs, then, after kernel lockdown is
# raised at run time, through /proc/spulse; what each interface allows, as
# root and as nobody. Raw results in /out for tests/lockdown/check.py.
# usage: guest-switch.sh BIN   (BIN: host path holding spulse.ko, spulse,
#        spulse-drain, workload/gt, workload/pingpong and this directory's
#        *.py)
# shellcheck source=tests/vm/guest-lib.sh
. "$VM_LIB"
X=$1
KO=$X/spulse.ko
D=/sys/kernel/debug/spulse
P=/proc/spulse
L=/sys/kernel/security/lockdown
PY=/usr/bin/python3
nobody() { hrun setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
echo "ld: kernel $(uname -r)"
mkdir -p /out/raw

# whole system, off-CPU on, small sub-buffers (many switches)
hrun /sbin/insmod "$KO" offcpu=1 freq=499 subbuf_size=65536 n_subbufs=32
echo "ld: insmod rc=$?"
ls -ln $P > /out/proc.ls 2>&1
hrun "$X/workload/gt" 30 > /out/gt.log 2>&1 &
gtsh=$!
hrun "$X/workload/pingpong" -n 1000000000 > /out/pp.log 2>&1 &
ppsh=$!
sleep 0.5
hrun $PY "$X/probe.py" r $D/control $D/cpu0 $D/meta $D/unwind $D/stats > /out/debugfs.before
echo start > $D/control; echo "ld: start rc=$?"

# part 1 through debugfs
hrun $PY "$X/rawread.py" $D "$VM_OUT_HOST/raw" part1 3 > /out/part1.log 2>&1
echo "ld: part1 rc=$?"

# kernel lockdown, raised while sampling runs (cannot be lowered again)
[ -e $L ] || mount -t securityfs securityfs /sys/kernel/security
echo integrity > $L; echo "ld: raise rc=$?"
echo "ld: lockdown $(cat $L)"
hrun $PY "$X/probe.py" r $D/control $D/cpu0 $D/meta $D/unwind $D/stats > /out/debugfs.after
hrun $PY "$X/probe.py" r $P/control $P/stats $P/unwind $P/meta $P/cpu0 $P/cpu1 > /out/proc.root
nobody $PY "$X/probe.py" rw $P/control $P/stats $P/unwind $P/meta $P/cpu0 $P/cpu1 > /out/proc.nobody 2>&1
echo "ld: nobody rc=$?"
# another mount of procfs: the relay twins' sizes live in the first one
mkdir -p /host/tmp/proc2 && mount -t proc proc /host/tmp/proc2
hrun $PY "$X/probe.py" r /tmp/proc2/spulse/cpu0 /tmp/proc2/spulse/stats > /out/proc2.probe
umount /host/tmp/proc2

# part 2 through /proc/spulse: from where part 1 stopped, then stop
hrun $PY "$X/rawread.py" $P "$VM_OUT_HOST/raw" part2 3 --finish > /out/part2.log 2>&1
echo "ld: part2 rc=$?"
cat $P/stats > /out/stats.final
cat $P/control > /out/control.final
# spulse-drain picks /proc/spulse by itself (and says so)
hrun "$X/spulse-drain" --verbose --once --no-kallsyms --no-unwind-tables \
	-o "$VM_OUT_HOST/empty.spulse" > /out/drain.log 2>&1
echo "ld: drain rc=$?"
kill $gtsh $ppsh 2>/dev/null
hrun pkill -x pingpong 2>/dev/null
hrun pkill -x gt 2>/dev/null
wait
hrun /sbin/rmmod spulse; echo "ld: rmmod rc=$?"
[ -e $P ] && echo "ld: /proc/spulse left" || echo "ld: /proc/spulse gone"
dmesg > /out/dmesg
exit 0
