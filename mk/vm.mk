# The QEMU test VM (tests/vm), ground-truth workloads (tests/workload), the
# end-to-end suite "e2e" (tests/e2e), `make demo` and `make bench-vm`.
# See docs/VM.md.

WORKLOAD_DIR := $(BUILD)/workload
WORKLOADS := $(WORKLOAD_DIR)/gt $(WORKLOAD_DIR)/churn $(WORKLOAD_DIR)/execself \
	$(WORKLOAD_DIR)/inject $(WORKLOAD_DIR)/stall
# Static, frame pointers everywhere, no inlining or tail calls: every user
# stack of the workloads' own code is knowable (gcc 12 still drops the FP of
# stackless leaves; the leaves keep a stack local for that).
WORKLOAD_CFLAGS := -static -O1 -g -fno-omit-frame-pointer \
	-mno-omit-leaf-frame-pointer -fno-optimize-sibling-calls -fno-inline \
	-fno-ipa-icf -Wall -Wextra -Werror -pthread

ALL_TARGETS += $(WORKLOADS)
CHECK_SUITES += e2e latency
BENCH_TARGETS += bench-vm

.PHONY: workloads vm-kernel vm-deps check-e2e check-latency demo demo-latency bench-vm

workloads: $(WORKLOADS)

$(WORKLOAD_DIR)/%: $(TOP)/tests/workload/%.c
	@mkdir -p $(@D)
	$(CC) $(WORKLOAD_CFLAGS) -o $@ $<

vm-deps:
	@$(TOP)/tests/vm/deps.sh

vm-kernel: vm-deps
	@$(TOP)/tests/vm/fetch-kernel.sh >/dev/null

# The e2e scenarios need spulse.ko, spulse-drain and spulse; the script
# builds them through their own targets (module, $(BUILD)/spulse-drain,
# $(BUILD)/spulse) and counts a missing piece as a failure.
check-e2e: vm-kernel workloads
	@BUILD=$(BUILD) $(TOP)/tests/e2e/run-e2e.sh

# Off-CPU capture against the injector's truth (tests/e2e/run-latency.sh):
# one stock-kernel boot, spulse.ko offcpu=1 raw streams, a drained spool
# and a flight recording.
check-latency: vm-kernel workloads
	@BUILD=$(BUILD) $(TOP)/tests/e2e/run-latency.sh

demo: vm-kernel workloads
	@BUILD=$(BUILD) $(TOP)/tests/vm/demo.sh

# The README's latency walk-through: build/workload/stall under
# spulse record --off-cpu --flight, analysed on the host (docs/LATENCY.md).
demo-latency: vm-kernel workloads
	@BUILD=$(BUILD) $(TOP)/tests/vm/demo-latency.sh

# Issue 11 Deliver 1: gt and python3 unprofiled / spulse record / perf record
# -g at 999 and 4999 Hz, BENCH_VM_REPS (15) interleaved reps in one boot,
# bootstrap intervals and verdicts (bench/vm/run-bench.sh, docs/VM.md).
bench-vm: vm-kernel workloads
	@BUILD=$(BUILD) $(TOP)/bench/vm/run-bench.sh
