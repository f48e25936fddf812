#!/bin/sh
# Guest script: where the sample handler's time goes. gt -n ROUNDS under
# spulse.ko (target, 999 Hz, no drainer, buffer sized for the whole run),
# with sample_phase_stats=0 (handler_ns per sample, untimed) and =1 (the
# sample_phase_* split), REPS times, interleaved over the modules given
# (NAME=KO_PATH; default: the repository's spulse.ko), so an A/B runs in
# one boot. Prints one line per run: module, mode, samples, handler
# ns/sample, loss keys, then the per-sample phase means.
# usage: vm-sample-phase.sh BUILD_DIR [ROUNDS] [REPS] [NAME=KO_PATH...]
. "$VM_LIB"
B=$1
N=${2:-150}
R=${3:-2}
shift 3 2>/dev/null || shift $#
[ $# -gt 0 ] || set -- "cur=$VM_TOP/spulse.ko"
D=/sys/kernel/debug/spulse
GT=/host$B/workload/gt
i=0
while [ $i -lt "$R" ]; do
	for nk in "$@"; do
		for ph in 0 1; do
			$GT -s 3 -n "$N" > /tmp/prof 2>&1 &
			g=$!
			sleep 0.3
			chroot /host /sbin/insmod "${nk#*=}" target_pid=$g \
				subbuf_size=1048576 n_subbufs=16 autostart=1 \
				sample_phase_stats=$ph
			wait $g
			echo "stop" > $D/control
			awk -v ph=$ph -v name="${nk%%=*}" '
				{ v[$1] = $2 }
				END {
					n = v["samples_taken"]; if (!n) n = 1
					printf "%s phase_stats=%d samples %d ns/sample %.0f", name, ph,
					       v["samples_taken"], v["handler_ns"] / n
					split("seen throttled lost_throttled samples_expected kstack_truncated ustack_fp_steps sample_cache_hits sample_cache_misses", k, " ")
					for (j = 1; j in k; j++) printf " %s %s", k[j], v[k[j]]
					if (ph) {
						m = v["sample_phase_n"]; if (!m) m = 1
						printf " timed %.0f", v["sample_phase_ns"] / m
						split("kstack ustack meta encode relay", q, " ")
						s = 0
						for (j = 1; j in q; j++) {
							x = v["sample_phase_" q[j] "_ns"]; s += x
							printf " %s %.0f", q[j], x / m
						}
						printf " other %.0f outliers %d", (v["sample_phase_ns"] - s) / m, v["sample_phase_outliers"]
					}
					printf "\n"
				}' $D/stats
			chroot /host /sbin/rmmod spulse
		done
	done
	i=$((i + 1))
done
