# make bench-rt: the wakeup latency spulse adds on Debian's PREEMPT_RT
# kernel (issue 21 item 3; bench/rt/, docs/RT.md). One boot of 6.12-rt
# (single-threaded TCG): cyclictest under a context-switch storm without a
# profiler, under spulse record, spulse record --off-cpu and perf record -e
# sched:sched_switch -g, interleaved; prints max and p99 per mode. Not part
# of make check (about 2 + REPS x 4 x (SECS + 15 s) minutes of VM time).
#
#   BENCH_RT_KERNEL BENCH_RT_SECS BENCH_RT_REPS BENCH_RT_FREQ BENCH_RT_MODES
#   (bench/rt/run.sh)

BENCH_TARGETS += bench-rt
.PHONY: bench-rt

bench-rt:
	@BUILD=$(BUILD) $(TOP)/bench/rt/run.sh
