# make bench-insns: exact guest instruction counts of spulse record against
# perf record, from a QEMU TCG plugin (bench/insns/insns.c; its API header
# fetched from Debian's qemu source package into ~/.cache/spulse/ by
# bench/insns/plugin-header.sh), in one VM boot with one TCG thread.
# bench/insns/run.sh lists the knobs (BENCH_INSNS_REPS, _WORKLOADS, _MODES,
# the lengths); docs/BENCH-INSNS.md the method. Not part of make check.

BENCH_TARGETS += bench-insns

.PHONY: bench-insns

bench-insns: vm-kernel
	@BUILD=$(BUILD) $(TOP)/bench/insns/run.sh
