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

# interleave REPS FN ITEM...: for each repetition i = 1..REPS, "FN i ITEM"
# for every ITEM, repetition i starting with the i-th item (modes
# interleaved, none always first); the benches' rotation.
interleave() {
	_il_r=$1 _il_f=$2
	shift 2
	_il_i=1
	while [ $_il_i -le $_il_r ]; do
		_il_k=0
		while [ $_il_k -lt $# ]; do
			_il_j=$(( (_il_i - 1 + _il_k) % $# + 1 ))
			eval "_il_x=\${$_il_j}"
			"$_il_f" $_il_i "$_il_x"
			_il_k=$((_il_k + 1))
		done
		_il_i=$((_il_i + 1))
	done
}
