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
