# spulse-drain (user/drain -> build/spulse-drain), the drain library used by
# `spulse record` (DRAIN_A), and the test suite "drain". See docs/DRAIN.md.
#
# mk/lib.mk is included after this file (alphabetical order), so the library
# archive is named by path here rather than through its LIBSPULSE_A.

DRAIN_LIB := $(BUILD)/libspulse.a
# The unwind-table loader (unwind_load.c) builds tables with
# libspulse-unwind (mk/unwind.mk, included later: named by path here).
DRAIN_UNWIND_A := $(BUILD)/libspulse-unwind.a
DRAIN_LDLIBS = $(UNWIND_LDLIBS) -pthread
DRAIN_CFLAGS := -I$(TOP)/user/unwind -pthread
DRAIN_A := $(BUILD)/libspulse-drain.a
DRAIN_SRCS := $(filter-out $(TOP)/user/drain/main.c,\
	$(sort $(wildcard $(TOP)/user/drain/*.c)))
DRAIN_OBJS := $(patsubst $(TOP)/user/drain/%.c,$(BUILD)/drain/%.o,$(DRAIN_SRCS))
DRAIN_SAN_OBJS := $(patsubst $(TOP)/user/drain/%.c,$(BUILD)/drain-san/%.o,$(DRAIN_SRCS))
DRAIN_HDRS := $(wildcard $(TOP)/user/drain/*.h) $(wildcard $(TOP)/user/include/*.h) \
	$(wildcard $(TOP)/include/spulse/*.h) $(TOP)/user/unwind/unwind_build.h
DRAIN_TEST := $(BUILD)/tests/drain

.PHONY: drain check-drain

ifneq ($(wildcard $(TOP)/mk/lib.mk),)
ALL_TARGETS += $(BUILD)/spulse-drain $(DRAIN_A)
endif

# `spulse record` (user/cli/cmd_record.c) links the drain library in process.
# An archive in the object position comes before libspulse.a on the line.
CLI_EXTRA_OBJS += $(DRAIN_A)
$(BUILD)/spulse $(BUILD)/cli-san/spulse: $(DRAIN_A)

drain: $(BUILD)/spulse-drain $(DRAIN_A)

$(BUILD)/drain/%.o: $(TOP)/user/drain/%.c $(DRAIN_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(DRAIN_CFLAGS) -c -o $@ $<

$(BUILD)/drain-san/%.o: $(TOP)/user/drain/%.c $(DRAIN_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(DRAIN_CFLAGS) $(SAN_CFLAGS) -c -o $@ $<

$(DRAIN_A): $(DRAIN_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/spulse-drain: $(BUILD)/drain/main.o $(DRAIN_A) $(DRAIN_UNWIND_A) $(DRAIN_LIB)
	$(CC) $(USER_CFLAGS) -pthread -o $@ $^ $(DRAIN_LDLIBS)

# ---- tests (ASan+UBSan on our code; libspulse.a uninstrumented) -------
$(DRAIN_TEST)/spulse-drain: $(BUILD)/drain-san/main.o $(DRAIN_SAN_OBJS) \
		$(DRAIN_UNWIND_A) $(DRAIN_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(SAN_CFLAGS) -pthread -o $@ $^ $(DRAIN_LDLIBS)

$(DRAIN_TEST)/gen_fake: $(TOP)/tests/drain/gen_fake.c $(DRAIN_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(SAN_CFLAGS) -o $@ $<

$(DRAIN_TEST)/verify_spool: $(TOP)/tests/drain/verify_spool.c $(DRAIN_LIB) $(DRAIN_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(SAN_CFLAGS) -o $@ $< $(DRAIN_LIB)

$(DRAIN_TEST)/test_merge: $(TOP)/tests/drain/test_merge.c $(BUILD)/drain-san/merge.o $(DRAIN_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(SAN_CFLAGS) -I$(TOP)/user/drain -o $@ $< \
		$(BUILD)/drain-san/merge.o

$(DRAIN_TEST)/test_flight: $(TOP)/tests/drain/test_flight.c \
		$(BUILD)/drain-san/flight.o $(DRAIN_LIB) $(DRAIN_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(SAN_CFLAGS) -I$(TOP)/user/drain -o $@ $< \
		$(BUILD)/drain-san/flight.o $(DRAIN_LIB)

$(DRAIN_TEST)/test_meta_forward: $(TOP)/tests/drain/test_meta_forward.c \
		$(BUILD)/drain-san/meta_forward.o $(DRAIN_LIB) $(DRAIN_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(SAN_CFLAGS) -I$(TOP)/user/drain -o $@ $< \
		$(BUILD)/drain-san/meta_forward.o $(DRAIN_LIB)

$(DRAIN_TEST)/record: $(TOP)/tests/drain/record_main.c $(TOP)/user/cli/cmd_record.c \
		$(DRAIN_SAN_OBJS) $(DRAIN_UNWIND_A) $(DRAIN_LIB) $(DRAIN_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(CLI_ROOM_CFLAGS) $(DRAIN_CFLAGS) $(SAN_CFLAGS) -o $@ \
		$(TOP)/tests/drain/record_main.c $(TOP)/user/cli/cmd_record.c \
		$(DRAIN_SAN_OBJS) $(DRAIN_UNWIND_A) $(DRAIN_LIB) $(DRAIN_LDLIBS)

$(DRAIN_TEST)/test_kallsyms: $(TOP)/tests/drain/test_kallsyms.c \
		$(BUILD)/drain-san/kallsyms_copy.o $(DRAIN_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(SAN_CFLAGS) -I$(TOP)/user/drain -o $@ $< \
		$(BUILD)/drain-san/kallsyms_copy.o

$(DRAIN_TEST)/test_kstat: $(TOP)/tests/drain/test_kstat.c \
		$(BUILD)/drain-san/kernel_stats.o $(DRAIN_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(SAN_CFLAGS) -I$(TOP)/user/drain -o $@ $< \
		$(BUILD)/drain-san/kernel_stats.o

# Unit tests of the unwind-table loader against a fake debugfs file.
$(DRAIN_TEST)/test_unwind_load: $(TOP)/tests/drain/test_unwind_load.c \
		$(BUILD)/drain-san/unwind_load.o $(DRAIN_UNWIND_A) $(DRAIN_LIB) $(DRAIN_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(DRAIN_CFLAGS) $(SAN_CFLAGS) -I$(TOP)/user/drain -o $@ $< \
		$(BUILD)/drain-san/unwind_load.o $(DRAIN_UNWIND_A) $(DRAIN_LIB) \
		$(DRAIN_LDLIBS)

# Reads back the messages a drainer wrote into a fake DIR/unwind file.
$(DRAIN_TEST)/unwind_msgs: $(TOP)/tests/drain/unwind_msgs.c \
		$(DRAIN_UNWIND_A) $(DRAIN_LIB) $(DRAIN_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(DRAIN_CFLAGS) $(SAN_CFLAGS) -o $@ $< \
		$(DRAIN_UNWIND_A) $(DRAIN_LIB) $(DRAIN_LDLIBS)

DRAIN_TEST_BINS := $(BUILD)/spulse-drain $(DRAIN_TEST)/spulse-drain \
	$(DRAIN_TEST)/gen_fake $(DRAIN_TEST)/verify_spool $(DRAIN_TEST)/test_merge \
	$(DRAIN_TEST)/record $(DRAIN_TEST)/test_meta_forward $(DRAIN_TEST)/test_flight \
	$(DRAIN_TEST)/unwind_msgs $(DRAIN_TEST)/test_unwind_load \
	$(DRAIN_TEST)/test_kallsyms $(DRAIN_TEST)/test_kstat

CHECK_SUITES += drain
check-drain: $(DRAIN_TEST_BINS) $(BUILD)/spulse
	@mkdir -p $(BUILD)/check
	@BUILD=$(BUILD) $(TOP)/tests/drain/run.sh $(DRAIN_TEST)

# ---- benchmark ----------------------------------------------------------
BENCH_TARGETS += bench-drain
.PHONY: bench-drain
bench-drain: $(BUILD)/spulse-drain $(DRAIN_TEST)/gen_fake $(DRAIN_TEST)/verify_spool
	@BUILD=$(BUILD) $(TOP)/tests/drain/bench.sh $(DRAIN_TEST)

# Spool bytes and cpu records, the merge's order against release()'s
# grouping by CPU, on 2 alternating fake CPUs (docs/DRAIN.md, "Merging").
BENCH_TARGETS += bench-drain-group
.PHONY: bench-drain-group
bench-drain-group: $(BUILD)/spulse-drain $(BUILD)/spulse $(DRAIN_TEST)/gen_fake \
		$(DRAIN_TEST)/verify_spool
	@BUILD=$(BUILD) $(TOP)/tests/drain/group-bytes.sh $(DRAIN_TEST)

# The drainer's CPU in the VM (TCG, stock kernel, spulse.ko at 1000 Hz on a
# 2-thread CPU-bound workload): tests/drain/cost-vm.sh.
BENCH_TARGETS += bench-drain-vm
.PHONY: bench-drain-vm
bench-drain-vm:
	@BUILD=$(BUILD) $(TOP)/tests/drain/cost-vm.sh 20 1000

# ---- `spulse record` with the real module, in the VM (tests/vm) ---------
CHECK_SUITES += record-vm
.PHONY: check-record-vm
check-record-vm:
	@mkdir -p $(BUILD)/check
	@BUILD=$(BUILD) $(TOP)/tests/drain/run-vm-record.sh
