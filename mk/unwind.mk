# libspulse-unwind (user/unwind -> build/libspulse-unwind.a): unwind tables
# built from an ELF file's CFI with elfutils libdw, linked into the spulse
# CLI (`spulse unwind`); its test suite "unwind". See docs/UNWIND.md.
#
# Users of the library compile with $(UNWIND_CFLAGS) (-I for
# unwind_build.h) and link $(UNWIND_A) $(UNWIND_LDLIBS).

UNWIND_A := $(BUILD)/libspulse-unwind.a
UNWIND_SAN_A := $(BUILD)/asan/libspulse-unwind.a
UNWIND_SRCS := $(sort $(wildcard $(TOP)/user/unwind/*.c))
UNWIND_OBJS := $(patsubst $(TOP)/user/unwind/%.c,$(BUILD)/unwind/%.o,$(UNWIND_SRCS))
UNWIND_SAN_OBJS := $(patsubst $(TOP)/user/unwind/%.c,$(BUILD)/unwind-san/%.o,$(UNWIND_SRCS))
UNWIND_HDRS := $(wildcard $(TOP)/user/unwind/*.h) $(TOP)/include/spulse/unwind.h \
	$(TOP)/include/spulse/types.h
UNWIND_CFLAGS := -I$(TOP)/user/unwind
UNWIND_LDLIBS := -ldw -lelf -ldebuginfod

.PHONY: unwind check-unwind

ALL_TARGETS += $(UNWIND_A)
unwind: $(UNWIND_A)

# libdebuginfod (optional lookups, opts.use_debuginfod) is in install-deps.
UNWIND_DEFS := -DSUT_HAVE_DEBUGINFOD

$(BUILD)/unwind/%.o: $(TOP)/user/unwind/%.c $(UNWIND_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(UNWIND_DEFS) -c -o $@ $<

$(BUILD)/unwind-san/%.o: $(TOP)/user/unwind/%.c $(UNWIND_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(SAN_CFLAGS) $(UNWIND_DEFS) -c -o $@ $<

$(UNWIND_A): $(UNWIND_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(UNWIND_SAN_A): $(UNWIND_SAN_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

# The CLI's `spulse unwind` (user/cli/cmd_unwind.c).
CLI_EXTRA_OBJS += $(UNWIND_A)
CLI_EXTRA_LDLIBS += $(UNWIND_LDLIBS)
$(BUILD)/spulse $(BUILD)/cli-san/spulse: $(UNWIND_A)
$(BUILD)/cli/cmd_unwind.o $(BUILD)/cli-san/cmd_unwind.o: $(UNWIND_HDRS)
$(BUILD)/cli/cmd_unwind.o $(BUILD)/cli-san/cmd_unwind.o: USER_CFLAGS += $(UNWIND_CFLAGS)

# ---- tests (suite "unwind") ------------------------------------------------
# Test ELFs from tests/unwind/src, built -O2 -fomit-frame-pointer like a
# distribution: a PIE (ut_prog) with its shared library (libut.so), the
# library with IBT PLTs (libut-ibt.so: the lazy PLT's CFI says lit9), with
# IBT PLTs and no linker-made FDEs (libut-nofde.so: FDE-less .plt and
# .plt.sec), with no linker-made FDEs (libut-nofde-lazy.so: FDE-less .plt),
# without a build-id (libut-noid.so), and with its CFI in .debug_frame only
# (libut-dframe.so; run.sh splits it into a stripped file + debug file).
UNWIND_TEST := $(BUILD)/tests/unwind
UT_SRC := $(TOP)/tests/unwind/src
UT_CFLAGS := -O2 -g -fomit-frame-pointer -Wall -Wextra -Werror
UT_LIB_DEPS := $(UT_SRC)/ut_lib.c $(UT_SRC)/ut_lib.h
UT_ELFS := $(UNWIND_TEST)/libut.so $(UNWIND_TEST)/ut_prog $(UNWIND_TEST)/libut-ibt.so \
	$(UNWIND_TEST)/libut-nofde.so $(UNWIND_TEST)/libut-nofde-lazy.so \
	$(UNWIND_TEST)/libut-noid.so \
	$(UNWIND_TEST)/libut-dframe.so $(UNWIND_TEST)/ut_lib.o $(UNWIND_TEST)/libbig.so \
	$(UNWIND_TEST)/ut_walk $(UNWIND_TEST)/ut_walk_preload.so $(UNWIND_TEST)/ut_deps

$(UNWIND_TEST)/libut.so: $(UT_LIB_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(UT_CFLAGS) -fPIC -shared -Wl,-soname,libut.so -o $@ $<

$(UNWIND_TEST)/ut_prog: $(UT_SRC)/ut_prog.c $(UNWIND_TEST)/libut.so
	$(CC) $(UT_CFLAGS) -fPIE -pie -pthread -I$(UT_SRC) -o $@ $< \
		$(UNWIND_TEST)/libut.so -Wl,-rpath,'$$ORIGIN'

$(UNWIND_TEST)/libut-ibt.so: $(UT_LIB_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(UT_CFLAGS) -fPIC -shared -fcf-protection=full -Wl,-z,ibtplt -o $@ $<

$(UNWIND_TEST)/libut-nofde.so: $(UT_LIB_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(UT_CFLAGS) -fPIC -shared -fcf-protection=full -Wl,-z,ibtplt \
		-Wl,--no-ld-generated-unwind-info -o $@ $<

$(UNWIND_TEST)/libut-nofde-lazy.so: $(UT_LIB_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(UT_CFLAGS) -fPIC -shared -Wl,--no-ld-generated-unwind-info -o $@ $<

$(UNWIND_TEST)/libut-noid.so: $(UT_LIB_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(UT_CFLAGS) -fPIC -shared -Wl,--build-id=none -o $@ $<

$(UNWIND_TEST)/libut-dframe.so: $(UT_LIB_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(UT_CFLAGS) -fPIC -shared -fno-asynchronous-unwind-tables \
		-fno-unwind-tables -Wl,--build-id -o $@ $<

$(UNWIND_TEST)/ut_lib.o: $(UT_LIB_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(UT_CFLAGS) -fPIC -c -o $@ $<

# Walks its own stacks with the tables in a SIGPROF handler and compares
# each walk with backtrace() (tests/unwind/src/ut_walk.c).
$(UNWIND_TEST)/ut_walk: $(UT_SRC)/ut_walk.c $(UNWIND_TEST)/libut.so $(UNWIND_A) $(UNWIND_HDRS)
	$(CC) $(UT_CFLAGS) -D_GNU_SOURCE -I$(TOP)/include $(UNWIND_CFLAGS) -I$(UT_SRC) \
		-pthread -o $@ $< $(UNWIND_TEST)/libut.so -Wl,-rpath,'$$ORIGIN' \
		$(UNWIND_A) $(UNWIND_LDLIBS)

# The same walker as an LD_PRELOAD object (for Debian's python3), with the
# library's sources compiled in position-independent.
$(UNWIND_TEST)/ut_walk_preload.so: $(UT_SRC)/ut_walk.c $(UNWIND_SRCS) $(UNWIND_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(UT_CFLAGS) -D_GNU_SOURCE -DUT_WALK_PRELOAD -fPIC -shared -I$(TOP)/include \
		$(UNWIND_CFLAGS) -I$(UT_SRC) -pthread -o $@ $< $(UNWIND_SRCS) -ldw -lelf

# One FDE with 40000 rows (the per-FDE work bound).
$(UNWIND_TEST)/libbig.so: $(TOP)/tests/unwind/gen_big_fde.py
	@mkdir -p $(dir $@)
	python3 $< 40000 > $(UNWIND_TEST)/big.s
	$(CC) -shared -o $@ $(UNWIND_TEST)/big.s

# Unit tests: the library compiled with ASan+UBSan, linked in.
$(UNWIND_TEST)/test_unwind: $(TOP)/tests/unwind/test_unwind.c $(UNWIND_SAN_OBJS) \
		$(UNWIND_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(SAN_CFLAGS) $(UNWIND_CFLAGS) -o $@ $< \
		$(UNWIND_SAN_OBJS) -lcmocka $(UNWIND_LDLIBS) -pthread

# sut_deps() (ASan+UBSan) for run.sh's comparison with ldd
$(UNWIND_TEST)/ut_deps: $(UT_SRC)/ut_deps.c $(UNWIND_SAN_OBJS) $(UNWIND_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(SAN_CFLAGS) $(UNWIND_CFLAGS) -o $@ $< \
		$(UNWIND_SAN_OBJS) $(UNWIND_LDLIBS) -pthread

CHECK_SUITES += unwind
check-unwind: $(UT_ELFS) $(UNWIND_TEST)/test_unwind $(BUILD)/spulse
	@mkdir -p $(BUILD)/check
	@BUILD=$(BUILD) $(TOP)/tests/unwind/run.sh $(UNWIND_TEST) $(BUILD)/spulse

# ---- benchmark: table rows, bytes and build time of Debian binaries -------
BENCH_TARGETS += bench-unwind-tables
.PHONY: bench-unwind-tables
bench-unwind-tables: $(BUILD)/spulse
	@$(TOP)/tests/unwind/bench.sh $(BUILD)/spulse

# spulse record preloads tables (sut_deps(), user/cli/cmd_record.c).
$(BUILD)/cli/cmd_record.o $(BUILD)/cli-san/cmd_record.o: $(UNWIND_HDRS)
$(BUILD)/cli/cmd_record.o $(BUILD)/cli-san/cmd_record.o: USER_CFLAGS += $(UNWIND_CFLAGS)
# (the drain suite's record test binary compiles cmd_record.c too; the
# build tree's name is fixed here since mk/drain.mk may be read later)
$(BUILD)/tests/drain/record: USER_CFLAGS += $(UNWIND_CFLAGS)
