# libspulse (user/lib -> build/libspulse.a, build/libspulse.so), its test
# suites "unit", "asan", "fuzz", long fuzzing (make fuzz) and the library
# benchmark (make bench-lib). See docs/API.md.

LIBSPULSE_A := $(BUILD)/libspulse.a
LIBSPULSE_SO := $(BUILD)/libspulse.so

LIB_SRCS := $(sort $(wildcard $(TOP)/user/lib/*.c))
LIB_OBJS := $(patsubst $(TOP)/user/lib/%.c,$(BUILD)/lib/%.o,$(LIB_SRCS))
LIB_PIC_OBJS := $(patsubst $(TOP)/user/lib/%.c,$(BUILD)/lib/pic/%.o,$(LIB_SRCS))
LIB_SAN_OBJS := $(patsubst $(TOP)/user/lib/%.c,$(BUILD)/asan/lib/%.o,$(LIB_SRCS))
LIB_HDRS := $(wildcard $(TOP)/user/lib/*.h) $(TOP)/user/include/libspulse.h \
	$(wildcard $(TOP)/include/spulse/*.h)
LIB_CFLAGS = $(USER_CFLAGS) -fvisibility=hidden

ALL_TARGETS += $(LIBSPULSE_A) $(LIBSPULSE_SO)

.PHONY: lib check-unit check-asan check-fuzz fuzz bench-lib

lib: $(LIBSPULSE_A) $(LIBSPULSE_SO)

$(BUILD)/lib/%.o: $(TOP)/user/lib/%.c $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c -o $@ $<

$(BUILD)/lib/pic/%.o: $(TOP)/user/lib/%.c $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -fPIC -c -o $@ $<

$(BUILD)/asan/lib/%.o: $(TOP)/user/lib/%.c $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) $(SAN_CFLAGS) -c -o $@ $<

$(LIBSPULSE_A): $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(LIBSPULSE_SO): $(LIB_PIC_OBJS)
	$(CC) $(LIB_CFLAGS) -shared -o $@ $^

# The library built with ASan+UBSan, for the asan suite and sanitized tools.
LIBSPULSE_SAN_A := $(BUILD)/asan/libspulse.a
$(LIBSPULSE_SAN_A): $(LIB_SAN_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

# ---- unit tests (cmocka) ------------------------------------------------
UNIT_SRCS := $(sort $(wildcard $(TOP)/tests/unit/test_*.c))
UNIT_BINS := $(patsubst $(TOP)/tests/unit/%.c,$(BUILD)/tests/unit/%,$(UNIT_SRCS))
UNIT_SAN_BINS := $(patsubst $(TOP)/tests/unit/%.c,$(BUILD)/asan/tests/unit/%,$(UNIT_SRCS))
UNIT_HDRS := $(wildcard $(TOP)/tests/unit/*.h) $(TOP)/tests/vectors/varint_vectors.h \
	$(LIB_HDRS)
UNIT_CFLAGS = $(USER_CFLAGS) -I$(TOP)/tests -I$(TOP)/user/lib

$(BUILD)/tests/unit/%: $(TOP)/tests/unit/%.c $(TOP)/tests/unit/helpers.c \
		$(UNIT_HDRS) $(LIBSPULSE_A)
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -o $@ $< $(TOP)/tests/unit/helpers.c \
		$(LIBSPULSE_A) -lcmocka

$(BUILD)/asan/tests/unit/%: $(TOP)/tests/unit/%.c $(TOP)/tests/unit/helpers.c \
		$(UNIT_HDRS) $(LIBSPULSE_SAN_A)
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) $(SAN_CFLAGS) -o $@ $< \
		$(TOP)/tests/unit/helpers.c $(LIBSPULSE_SAN_A) -lcmocka

CHECK_SUITES += unit asan
check-unit: $(UNIT_BINS)
	@$(TOP)/tests/unit/run.sh $(BUILD)/check/unit.result $(UNIT_BINS)

# The same tests built with ASan+UBSan (library included), leaks checked.
check-asan: $(UNIT_SAN_BINS)
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		$(TOP)/tests/unit/run.sh $(BUILD)/check/asan.result $(UNIT_SAN_BINS)

# ---- fuzzing (libFuzzer, Debian clang) ----------------------------------
FUZZ_CC ?= clang
FUZZ_TARGETS := snapshot replay tail stream
FUZZ_SECONDS ?= 600
FUZZ_CHECK_SECONDS ?= 12
FUZZ_FLAGS := -O1 -g -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE \
	-I$(TOP)/include -I$(TOP)/user/include -fno-omit-frame-pointer \
	-fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_LIB_OBJS := $(patsubst $(TOP)/user/lib/%.c,$(BUILD)/fuzz/lib/%.o,$(LIB_SRCS))
FUZZ_BINS := $(patsubst %,$(BUILD)/fuzz/fuzz_%,$(FUZZ_TARGETS))
.SECONDARY: $(FUZZ_LIB_OBJS)

$(BUILD)/fuzz/lib/%.o: $(TOP)/user/lib/%.c $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(BUILD)/fuzz/fuzz_%: $(TOP)/tests/fuzz/fuzz_%.c $(TOP)/tests/fuzz/fuzz_common.h \
		$(FUZZ_LIB_OBJS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB_OBJS)

# Regenerate the committed seed corpus (same seeds for every target).
$(BUILD)/fuzz/gen_corpus: $(TOP)/tests/fuzz/gen_corpus.c $(LIBSPULSE_A) $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -o $@ $< $(LIBSPULSE_A)

.PHONY: fuzz-corpus
fuzz-corpus: $(BUILD)/fuzz/gen_corpus
	@for t in $(FUZZ_TARGETS); do \
		rm -rf $(TOP)/tests/fuzz/corpus/$$t; \
		mkdir -p $(TOP)/tests/fuzz/corpus/$$t; \
		$(BUILD)/fuzz/gen_corpus $(TOP)/tests/fuzz/corpus/$$t || exit 1; \
	done

# Short run of every target in `make check`; new inputs go to build/, the
# committed seeds are only read. Pass = the target exits 0 (no crash, no
# broken invariant).
CHECK_SUITES += fuzz
check-fuzz: $(FUZZ_BINS)
	@FUZZ_SECONDS=$(FUZZ_CHECK_SECONDS) $(TOP)/tests/fuzz/run.sh \
		$(BUILD)/check/fuzz.result $(BUILD)/fuzz $(TOP)/tests/fuzz/corpus \
		$(FUZZ_TARGETS)

# Long fuzzing: FUZZ_SECONDS per target (default 600).
fuzz: $(FUZZ_BINS)
	@FUZZ_SECONDS=$(FUZZ_SECONDS) $(TOP)/tests/fuzz/run.sh \
		$(BUILD)/fuzz/long.result $(BUILD)/fuzz $(TOP)/tests/fuzz/corpus \
		$(FUZZ_TARGETS)

# The fault campaign's long form (issue 10): every reader target for
# FUZZ_CPU_SECONDS CPU seconds each (default 3600 = one CPU-hour per target,
# measured as the fuzzer's user+sys time, so a niced run on a busy machine
# still gets its budget), FUZZ_JOBS targets at a time (default 2), each run
# in chunks of at most FUZZ_CHUNK wall seconds, on a work corpus kept in
# $(BUILD)/fuzz/work across runs. Not in make check. Prints per target:
# executions, coverage (cov/ft), corpus size, findings, CPU and wall
# seconds; crash inputs land in $(BUILD)/fuzz/work/TARGET/ (crash-*, ...).
FUZZ_CPU_SECONDS ?= 3600
FUZZ_JOBS ?= 2
.PHONY: fuzz-long
fuzz-long: $(FUZZ_BINS)
	@FUZZ_CPU_SECONDS=$(FUZZ_CPU_SECONDS) FUZZ_JOBS=$(FUZZ_JOBS) FUZZ_RESUME=1 \
		FUZZ_FORK=$(FUZZ_FORK) FUZZ_REPORT=1 $(TOP)/tests/fuzz/run.sh \
		$(BUILD)/fuzz/fuzz-long.result $(BUILD)/fuzz \
		$(TOP)/tests/fuzz/corpus $(FUZZ_TARGETS)

# ---- benchmark ------------------------------------------------------------
BENCH_TARGETS += bench-lib
BENCH_LIB_SAMPLES ?= 10000000
$(BUILD)/bench/bench_lib: $(TOP)/bench/bench_lib.c $(LIBSPULSE_A) $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -o $@ $< $(LIBSPULSE_A)

# The 10M-sample `spulse synth` spool (issue 11 Deliver 4's Replay target)
# is read as a third table; it is rebuilt when spulse is.
BENCH_LIB_SYNTH := $(BUILD)/bench/bench_lib_synth.spulse
$(BENCH_LIB_SYNTH): $(BUILD)/spulse
	@mkdir -p $(dir $@)
	$(BUILD)/spulse synth -q -o $@ --samples $(BENCH_LIB_SAMPLES)

bench-lib: $(BUILD)/bench/bench_lib $(BENCH_LIB_SYNTH)
	@$(BUILD)/bench/bench_lib $(BUILD)/bench $(BENCH_LIB_SAMPLES) \
		$(BENCH_LIB_SYNTH)

# bench-threads (issue 25 defect 5): peak RSS and time of every analysis
# command on a spool of 1M defined threads of which 1000 have data (table;
# no timed verdict). bench/bench_threads.sh.
BENCH_TARGETS += bench-threads
.PHONY: bench-threads
bench-threads: $(BUILD)/spulse $(BUILD)/tests/cli/spoolgen
	@$(TOP)/bench/bench_threads.sh $(BUILD)/spulse \
		$(BUILD)/tests/cli/spoolgen $(BUILD)/bench/threads
