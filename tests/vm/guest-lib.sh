# Helpers for guest scripts (busybox sh). Source with: . "$VM_LIB"
#
# The guest's /init has already mounted proc, sys, debugfs, devtmpfs and a
# tmpfs /tmp inside /host, and bound /out at its host path ($VM_OUT_HOST)
# inside /host, so host-built dynamic binaries run under `hrun` with the same
# paths as on the host.

# hrun CMD [ARGS...]: run a host binary in the host root (chroot /host).
hrun() {
	chroot /host /usr/bin/env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

# Host path of a file written to /out (for hrun'd tools).
out_host() {
	echo "$VM_OUT_HOST/$1"
}

# vm_log MSG: a line on the console and in guest.log, marked for grepping.
vm_log() {
	echo "vm: $*"
}

# flight_round B NAME T1 T2 T3: `spulse record --off-cpu --flight 2 --post
# 0.5 --min-gap 1` (B = the build directory) on pingpong, written to
# /out/NAME.spulse (output in /out/NAME.out); once recording runs, a
# manual trigger through debugfs control after T1 s, SIGUSR1 T2 s later,
# SIGINT T3 s after that; returns spulse record's exit status.
# FR_MODULE=PATH loads that spulse.ko (spulse record --module) instead of
# the default next to B/spulse.
flight_round() {
	# not hrun: a backgrounded function is a subshell, and the signals
	# must reach spulse record itself
	chroot /host /usr/bin/env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		"$1/spulse" record ${FR_MODULE:+--module "$FR_MODULE"} \
		--off-cpu --flight 2 --post 0.5 --min-gap 1 \
		-o "$VM_OUT_HOST/$2.spulse" -- "$1/workload/pingpong" -n 1000000000 \
		>"/out/$2.out" 2>&1 &
	_fr=$!
	for _ in $(seq 100); do
		hrun grep -q running /sys/kernel/debug/spulse/control 2>/dev/null && break
		sleep 0.1
	done
	sleep "$3"
	hrun sh -c 'echo trigger > /sys/kernel/debug/spulse/control'
	sleep "$4"
	kill -USR1 $_fr
	sleep "$5"
	kill -INT $_fr
	wait $_fr
}
