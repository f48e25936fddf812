# Whole stacks from the first sample (issue 22), in the stock-kernel VM:
#   make check-first-sample   suite "first-sample"
#                             (tests/e2e/firstsample_run.sh): spulse record
#                             of wrapinj (blocks through glibc's nanosleep
#                             and read; static and dynamic, with and without
#                             frame pointers) from its first instruction,
#                             off-CPU time per blocking function against
#                             its own truth; clockloop (vDSO samples reach
#                             the worker); dlwait (how long a dlopen'ed
#                             library waits for its table, measured);
#                             notable (fpspin recorded without the hold:
#                             its cut stacks before its table is mapped
#                             count as ustack_cut_no_table_yet, later
#                             ones are whole); demo (gt, the demo
#                             workload: flame and report agree on every
#                             function's total, samples and off-CPU).

FS_BIN := $(BUILD)/first-sample-bin
FS_TOOLS := $(FS_BIN)/wrapinj-static-fp $(FS_BIN)/wrapinj-static-nofp \
	$(FS_BIN)/wrapinj-dyn-fp $(FS_BIN)/wrapinj-dyn-nofp $(FS_BIN)/clockloop \
	$(FS_BIN)/dlwait $(FS_BIN)/libdlwait.so $(FS_BIN)/fpspin \
	$(FS_BIN)/gt
FS_WFLAGS := -g -Wall -Wextra -Werror -pthread

ALL_TARGETS += $(FS_TOOLS)
CHECK_SUITES += first-sample

.PHONY: check-first-sample first-sample-tools

first-sample-tools: $(FS_TOOLS)

$(FS_BIN)/wrapinj-static-fp: $(TOP)/tests/workload/wrapinj.c
	@mkdir -p $(@D)
	$(CC) $(FS_WFLAGS) -O2 -fno-omit-frame-pointer -static -o $@ $<
$(FS_BIN)/wrapinj-static-nofp: $(TOP)/tests/workload/wrapinj.c
	@mkdir -p $(@D)
	$(CC) $(FS_WFLAGS) -O2 -fomit-frame-pointer -static -o $@ $<
$(FS_BIN)/wrapinj-dyn-fp: $(TOP)/tests/workload/wrapinj.c
	@mkdir -p $(@D)
	$(CC) $(FS_WFLAGS) -O2 -fno-omit-frame-pointer -fPIE -pie -o $@ $<
$(FS_BIN)/wrapinj-dyn-nofp: $(TOP)/tests/workload/wrapinj.c
	@mkdir -p $(@D)
	$(CC) $(FS_WFLAGS) -O2 -fomit-frame-pointer -fPIE -pie -o $@ $<
$(FS_BIN)/clockloop: $(TOP)/tests/workload/clockloop.c
	@mkdir -p $(@D)
	$(CC) $(FS_WFLAGS) -O2 -fomit-frame-pointer -fPIE -pie -o $@ $<
$(FS_BIN)/dlwait: $(TOP)/tests/workload/dlwait.c
	@mkdir -p $(@D)
	$(CC) $(FS_WFLAGS) -O2 -fPIE -pie -o $@ $< -ldl
$(FS_BIN)/libdlwait.so: $(TOP)/tests/workload/dlwait_lib.c
	@mkdir -p $(@D)
	$(CC) $(FS_WFLAGS) -O2 -fomit-frame-pointer -fPIC -shared -o $@ $<

$(FS_BIN)/fpspin: $(TOP)/tests/workload/fpspin.c
	@mkdir -p $(@D)
	$(CC) $(FS_WFLAGS) -O2 -fomit-frame-pointer -fPIE -pie -o $@ $<

# the demo workload, built as `make workloads` builds it (mk/vm.mk)
$(FS_BIN)/gt: $(TOP)/tests/workload/gt.c
	@mkdir -p $(@D)
	$(CC) $(WORKLOAD_CFLAGS) -o $@ $<

check-first-sample: vm-kernel
	@mkdir -p $(BUILD)/check
	@BUILD=$(BUILD) $(TOP)/tests/e2e/firstsample_run.sh
