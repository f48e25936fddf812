# make bench-offcpu: the off-CPU benchmark in the VM (bench/vm/offcpu-*).
# One boot of Debian's stock kernel; tests/workload/pingpong (two threads
# ping-ponging a byte over two pipes) unprofiled, under spulse.ko offcpu=1 +
# spulse-drain, under `perf record -e sched:sched_switch -g` and under
# `perf sched record`, interleaved; prints a table. Not part of make check.
#
#   BENCH_OFFCPU_REPS    repetitions per mode (default 10)
#   BENCH_OFFCPU_ROUNDS  pingpong round trips per run (default 50000)
#   BENCH_OFFCPU_CPU     pin pingpong's threads to this vCPU (default 1, "" = no pin)

# This fragment sorts before mk/vm.mk: name the workload directory itself
# (WORKLOAD_CFLAGS is only expanded in the recipe, after vm.mk is read).
BENCH_OFFCPU_PINGPONG := $(BUILD)/workload/pingpong

ALL_TARGETS += $(BENCH_OFFCPU_PINGPONG)
BENCH_TARGETS += bench-offcpu

.PHONY: bench-offcpu

$(BENCH_OFFCPU_PINGPONG): $(TOP)/tests/workload/pingpong.c
	@mkdir -p $(@D)
	$(CC) $(WORKLOAD_CFLAGS) -o $@ $<

bench-offcpu: vm-kernel $(BENCH_OFFCPU_PINGPONG)
	@BUILD=$(BUILD) $(TOP)/bench/vm/offcpu-run.sh
