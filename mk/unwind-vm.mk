# Table-driven user unwinding end to end, in the stock-kernel VM (issue 8):
#   make check-unwind-vm   suite "unwind-vm" (tests/e2e/unwind_run.sh):
#                          Debian's FP-less python3, xz, gzip and the nofp
#                          test program recorded by `spulse record` and by
#                          `perf record --call-graph dwarf` in one boot:
#                          coverage (reach the thread entry) and caller-chain
#                          agreement, hostile tables, unwind=fp
#   make bench-unwind   bench/vm/unwind_run.sh: handler_ns tables vs FP,
#                          spool vs perf dwarf bytes/sample, table memory
#   make demo-unwind       tests/vm/demo-unwind.sh: one whole python3 stack
#
# The FP-less test program is built like a distribution binary (PIE,
# -O2 -fomit-frame-pointer, a shared library beside it, found by $ORIGIN);
# nofp-b is the same source at -O1: another build-id and another layout,
# for the wrong-build-id cases. unwind_poke (tests/e2e/unwind_poke.c) talks
# to debugfs spulse/unwind directly.

UNWIND_VM_BIN := $(BUILD)/unwind-vm-bin
UNWIND_VM_TOOLS := $(UNWIND_VM_BIN)/nofp $(UNWIND_VM_BIN)/libnofp.so \
	$(UNWIND_VM_BIN)/nofp-b $(UNWIND_VM_BIN)/unwind_poke
NOFP_CFLAGS := -O2 -g -fomit-frame-pointer -Wall -Wextra -Werror

ALL_TARGETS += $(UNWIND_VM_TOOLS)
CHECK_SUITES += unwind-vm
BENCH_TARGETS += bench-unwind

.PHONY: check-unwind-vm bench-unwind demo-unwind unwind-vm-tools

unwind-vm-tools: $(UNWIND_VM_TOOLS)

$(UNWIND_VM_BIN)/libnofp.so: $(TOP)/tests/workload/libnofp.c
	@mkdir -p $(@D)
	$(CC) $(NOFP_CFLAGS) -fPIC -shared -o $@ $<

$(UNWIND_VM_BIN)/nofp: $(TOP)/tests/workload/nofp.c $(UNWIND_VM_BIN)/libnofp.so
	$(CC) $(NOFP_CFLAGS) -fPIE -pie -pthread -o $@ $< -L$(UNWIND_VM_BIN) -lnofp \
		-Wl,-rpath,'$$ORIGIN'

$(UNWIND_VM_BIN)/nofp-b: $(TOP)/tests/workload/nofp.c $(UNWIND_VM_BIN)/libnofp.so
	$(CC) $(NOFP_CFLAGS) -O1 -fPIE -pie -pthread -o $@ $< -L$(UNWIND_VM_BIN) -lnofp \
		-Wl,-rpath,'$$ORIGIN'

# mk/unwind.mk sorts after this file: its archive is named by path here
# (UNWIND_CFLAGS and UNWIND_LDLIBS are only expanded in the recipe).
$(UNWIND_VM_BIN)/unwind_poke: $(TOP)/tests/e2e/unwind_poke.c $(BUILD)/libspulse-unwind.a \
		$(TOP)/user/unwind/unwind_build.h $(TOP)/include/spulse/unwind.h
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(UNWIND_CFLAGS) -o $@ $< $(BUILD)/libspulse-unwind.a \
		$(UNWIND_LDLIBS)

check-unwind-vm: vm-kernel
	@mkdir -p $(BUILD)/check
	@BUILD=$(BUILD) $(TOP)/tests/e2e/unwind_run.sh

bench-unwind: vm-kernel
	@BUILD=$(BUILD) $(TOP)/bench/vm/unwind_run.sh

demo-unwind: vm-kernel
	@BUILD=$(BUILD) $(TOP)/tests/vm/demo-unwind.sh
