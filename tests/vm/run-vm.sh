#!/usr/bin/env bash
# Boot a throw-away QEMU (TCG) VM, run one guest script in it, return its
# exit code. See docs/VM.md.
#
# usage: run-vm.sh [--kernel-id ID | --kernel BZIMAGE [--kmods DIR]]
#                  [--cpus N] [--mem SIZE]
#                  [--timeout SECONDS] [--append "extra cmdline"] [--verbose]
#                  --out OUTDIR -- GUEST_SCRIPT [ARGS...]
#
# Default kernel: Debian's stock linux-image matching the installed
# linux-headers-*-amd64 (tests/vm/fetch-kernel.sh), with its virtio/9p
# modules in the initramfs. --kmods "" means the kernel has them built in.
# --kernel-id ID boots a kernel of tests/kernels/kernels.list (fetched into
# ~/.cache/spulse/kernels/ by tests/kernels/fetch.sh) with its own modules;
# the ones it has built in (modules.builtin) are left out of the initramfs.
# The guest sees the host root read-only at /host and OUTDIR read-write at
# /out (also bound at its host path inside /host, for `chroot /host`).
# OUTDIR/console.log holds the serial console, OUTDIR/guest.log the script's
# output, OUTDIR/exit-code its exit status, OUTDIR/dmesg.txt the guest dmesg.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

usage() {
	sed -n '5,9p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

kernel=
kernel_id=
kmods=unset
cpus=2
mem=1G
timeout=300
append=
out=
verbose=${VM_VERBOSE:-0}
# VM_TCG_THREAD=single runs every vCPU on one host thread (QEMU's
# -accel tcg,thread=single) instead of one thread per vCPU (multi).
tcg_thread=${VM_TCG_THREAD:-multi}
# VM_QMP=PATH opens a QMP socket there (to look into a hung guest:
# tests/vm/qmp.py PATH 'info registers -a').
qmp=${VM_QMP:-}
# VM_QEMU_ARGS="..." appends words to QEMU's command line (e.g. a TCG
# plugin: -plugin /path/libinsns.so,arg=...); split on whitespace.
extra_qemu=${VM_QEMU_ARGS:-}
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=$2; shift 2 ;;
	--kernel-id) kernel_id=$2; shift 2 ;;
	--kmods) kmods=$2; shift 2 ;;
	--cpus) cpus=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--append) append=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--verbose|-v) verbose=1; shift ;;
	--) shift; break ;;
	-h|--help) usage ;;
	*) break ;;
	esac
done
[ -n "$out" ] && [ $# -ge 1 ] || usage
script=$(realpath "$1")
shift
[ -f "$script" ] || { echo "run-vm: no guest script $script" >&2; exit 2; }

if [ -n "$kernel_id" ]; then
	[ -z "$kernel" ] || { echo "run-vm: --kernel-id and --kernel exclude each other" >&2; exit 2; }
	kdir=$("$top/tests/kernels/fetch.sh" "$kernel_id") ||
		{ echo "run-vm: cannot fetch kernel $kernel_id" >&2; exit 2; }
	# shellcheck source=/dev/null
	kernel=$(. "$kdir/kernel.env" && echo "$VMLINUZ")
	[ "$kmods" != unset ] || kmods=$(. "$kdir/kernel.env" && echo "$MODULES")
elif [ -z "$kernel" ]; then
	kdir=$("$here/fetch-kernel.sh")
	ver=$(cat "$kdir/.version")
	kernel=$kdir/boot/vmlinuz-$ver
	[ "$kmods" != unset ] || kmods=$kdir/lib/modules/$ver
fi
[ "$kmods" != unset ] || kmods=
[ -f "$kernel" ] || { echo "run-vm: no kernel $kernel" >&2; exit 2; }
initrd=$("$here/mkinitramfs.sh" "$kmods")

mkdir -p "$out"
out=$(realpath "$out")
rm -f "$out/exit-code" "$out/console.log" "$out/guest.log" "$out/dmesg.txt"
mkdir -p "$out/.vm"
# The command the guest's /init runs; quoted for sh.
{
	printf 'VM_SCRIPT=%q\n' "$script"
	printf 'VM_SCRIPT_COPY=%q\n' /out/.vm/script.sh
	printf 'VM_OUT_HOST=%q\n' "$out"
	printf 'VM_TOP=%q\n' "$top"
	printf 'set --'
	for a in "$@"; do printf ' %q' "$a"; done
	printf '\n'
} > "$out/.vm/cmd"
# Run a copy: the guest overlays /host/tmp with a tmpfs, hiding host /tmp.
cp "$script" "$out/.vm/script.sh"

# no_timer_check: on a loaded host the emulated IO-APIC timer check can fail
# and panic the boot ("IO-APIC + timer doesn't work!"); every VM skips it.
qemu=(qemu-system-x86_64 -machine q35 -accel "tcg,thread=$tcg_thread" -cpu max -smp "$cpus" -m "$mem"
	-nographic -no-reboot -nic none
	-kernel "$kernel" -initrd "$initrd"
	-append "console=ttyS0 panic=-1 rdinit=/init mitigations=off loglevel=4 no_timer_check $append"
	-fsdev "local,id=hostfs,path=/,security_model=none,readonly=on,multidevs=remap"
	-device "virtio-9p-pci,fsdev=hostfs,mount_tag=host"
	-fsdev "local,id=outfs,path=$out,security_model=none,multidevs=remap"
	-device "virtio-9p-pci,fsdev=outfs,mount_tag=out"
	-fsdev "local,id=topfs,path=$top,security_model=none,readonly=on,multidevs=remap"
	-device "virtio-9p-pci,fsdev=topfs,mount_tag=top")
[ -z "$qmp" ] || qemu+=(-qmp "unix:$qmp,server=on,wait=off")
# shellcheck disable=SC2206 # word splitting is the interface
[ -z "$extra_qemu" ] || qemu+=($extra_qemu)

start=$(date +%s.%N)
set +e
if [ "$verbose" = 1 ]; then
	timeout -k 5 "$timeout" "${qemu[@]}" < /dev/null 2>&1 | tee "$out/console.log"
	qrc=${PIPESTATUS[0]}
else
	timeout -k 5 "$timeout" "${qemu[@]}" < /dev/null > "$out/console.log" 2>&1
	qrc=$?
fi
set -e
secs=$(echo "$(date +%s.%N) - $start" | bc)
if [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ]; then
	echo "run-vm: TIMEOUT after ${timeout}s (console: $out/console.log); its last lines:" >&2
	tr -d '\r' < "$out/console.log" | tail -n 60 >&2 || true
	exit 124
fi
if [ ! -s "$out/exit-code" ]; then
	echo "run-vm: guest did not finish (qemu rc $qrc; console: $out/console.log)" >&2
	tail -n 20 "$out/console.log" >&2 || true
	exit 125
fi
rc=$(cat "$out/exit-code")
printf 'run-vm: guest exit %s after %.1fs\n' "$rc" "$secs" >&2
exit "$rc"
