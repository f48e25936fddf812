# shellcheck shell=bash
# Shared by the demo scripts (tests/vm/demo.sh, demo-latency.sh,
# demo-unwind.sh). Source with: . "$top/tests/demos/demo-lib.sh"

# copy_spool SRC DST: SRC and every sidecar the drainer saved beside it
# (SRC.kallsyms; SRC.vdso, the kernel's vdso image that names [vdso]
# frames; SRC.perf-PID.map) as DST, DST.kallsyms, ...; DST's files of an
# earlier run go first, so no stale sidecar stays beside the new spool.
copy_spool() {
	local f
	rm -f "$2" "$2".*
	for f in "$1" "$1".*; do
		[ -f "$f" ] && cp "$f" "$2${f#"$1"}"
	done
	return 0
}
