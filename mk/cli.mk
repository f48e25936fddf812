# spulse CLI (user/cli -> build/spulse), its test suite "cli" and the
# benchmarks (make bench, bench-cli). See docs/CLI.md.
#
# The CLI's code lives in rooms (user/<room>/), each built as a static
# library build/<room>/lib<room>.a (ASan+UBSan: build/<room>-san/), linked
# top room first: store -> export -> analysis -> synth -> sym, then
# libspulse. Includes run the same way down, never up (user/cli/cli.h says
# more); a header of another room is included as "room/name.h" through
# CLI_ROOM_CFLAGS.
#
# mk/lib.mk is included after this file (alphabetical order), so the library
# archive is named by path here rather than through its LIBSPULSE_A.
# Other fragments may append objects/libraries that `spulse record` needs to
# CLI_EXTRA_OBJS / CLI_EXTRA_LDLIBS (expanded at link time) and add those
# objects as prerequisites of $(BUILD)/spulse.

CLI_LIB := $(BUILD)/libspulse.a
CLI_SAN_LIB := $(BUILD)/asan/libspulse.a
CLI_ROOMS := store export analysis synth sym
CLI_ROOM_CFLAGS := -I$(TOP)/user
CLI_SRCS := $(sort $(wildcard $(TOP)/user/cli/*.c))
CLI_OBJS := $(patsubst $(TOP)/user/cli/%.c,$(BUILD)/cli/%.o,$(CLI_SRCS))
CLI_SAN_OBJS := $(patsubst $(TOP)/user/cli/%.c,$(BUILD)/cli-san/%.o,$(CLI_SRCS))
CLI_ROOM_LIBS := $(foreach r,$(CLI_ROOMS),$(BUILD)/$(r)/lib$(r).a)
CLI_ROOM_SAN_LIBS := $(foreach r,$(CLI_ROOMS),$(BUILD)/$(r)-san/lib$(r).a)
CLI_LDLIBS := -ldw -lelf -lz -lcrypto
CLI_HDRS := $(foreach r,cli $(CLI_ROOMS),$(wildcard $(TOP)/user/$(r)/*.h)) \
	$(wildcard $(TOP)/user/include/*.h) \
	$(wildcard $(TOP)/include/spulse/*.h) $(wildcard $(TOP)/user/drain/*.h)

# cli_room_rules ROOM: objects and archives of user/ROOM, plain and san.
define cli_room_rules
$(BUILD)/$(1)/%.o: $(TOP)/user/$(1)/%.c $$(CLI_HDRS)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(USER_CFLAGS) $$(CLI_ROOM_CFLAGS) -c -o $$@ $$<

$(BUILD)/$(1)-san/%.o: $(TOP)/user/$(1)/%.c $$(CLI_HDRS)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(USER_CFLAGS) $$(CLI_ROOM_CFLAGS) $$(SAN_CFLAGS) -c -o $$@ $$<

$(BUILD)/$(1)/lib$(1).a: $(patsubst $(TOP)/user/$(1)/%.c,$(BUILD)/$(1)/%.o,$(sort $(wildcard $(TOP)/user/$(1)/*.c)))
	@rm -f $$@
	$$(AR) rcs $$@ $$^

$(BUILD)/$(1)-san/lib$(1).a: $(patsubst $(TOP)/user/$(1)/%.c,$(BUILD)/$(1)-san/%.o,$(sort $(wildcard $(TOP)/user/$(1)/*.c)))
	@rm -f $$@
	$$(AR) rcs $$@ $$^
endef
$(foreach r,$(CLI_ROOMS),$(eval $(call cli_room_rules,$(r))))

.PHONY: cli check-cli bench bench-cli

# Build only once the library's fragment exists, so `make` keeps working
# for everyone before it lands.
ifneq ($(wildcard $(TOP)/mk/lib.mk),)
ALL_TARGETS += $(BUILD)/spulse
endif

cli: $(BUILD)/spulse

$(BUILD)/cli/%.o: $(TOP)/user/cli/%.c $(CLI_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(CLI_ROOM_CFLAGS) -c -o $@ $<

$(BUILD)/cli-san/%.o: $(TOP)/user/cli/%.c $(CLI_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(CLI_ROOM_CFLAGS) $(SAN_CFLAGS) -c -o $@ $<

$(BUILD)/spulse: $(CLI_OBJS) $(CLI_ROOM_LIBS) $(CLI_LIB)
	$(CC) $(USER_CFLAGS) -o $@ $(CLI_OBJS) $(CLI_EXTRA_OBJS) \
		$(CLI_ROOM_LIBS) $(CLI_LIB) $(CLI_LDLIBS) $(CLI_EXTRA_LDLIBS)

# The CLI, its rooms and libspulse compiled with ASan+UBSan, for the tests.
$(BUILD)/cli-san/spulse: $(CLI_SAN_OBJS) $(CLI_ROOM_SAN_LIBS) $(CLI_SAN_LIB)
	$(CC) $(USER_CFLAGS) $(SAN_CFLAGS) -o $@ $(CLI_SAN_OBJS) \
		$(CLI_EXTRA_OBJS) $(CLI_ROOM_SAN_LIBS) $(CLI_SAN_LIB) \
		$(CLI_LDLIBS) $(CLI_EXTRA_LDLIBS)

# Test helper: writes raw (possibly invalid) spools from dump-style text.
$(BUILD)/tests/cli/spoolgen: $(TOP)/tests/cli/spoolgen.c $(CLI_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(SAN_CFLAGS) -o $@ $<

# Test helper: a live spool written over time through the Recorder, for
# the spulse top tests (tests/cli/test_top.sh).
$(BUILD)/tests/cli/top_writer: $(TOP)/tests/cli/top_writer.c $(CLI_LIB) $(CLI_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -o $@ $< $(CLI_LIB)

# Optional: speedscope's browser build for tests/cli/test_offcpu_viewer.sh
# (a real trace-event client, run in headless chromium when present).
.PHONY: cli-speedscope
cli-speedscope:
	@mkdir -p $(BUILD)/tests/cli/speedscope
	cd $(BUILD)/tests/cli/speedscope && npm pack --silent speedscope@1.25.0 && \
		tar xzf speedscope-1.25.0.tgz

# check-cli fetches it once when npm is there (the npm registry is
# reachable); without npm, or offline, its tests are skipped with a note.
CLI_SPEEDSCOPE_INDEX := $(BUILD)/tests/cli/speedscope/package/dist/release/index.html
$(CLI_SPEEDSCOPE_INDEX):
	@if command -v npm >/dev/null; then \
		$(MAKE) --no-print-directory cli-speedscope || \
		echo "note: npm pack speedscope failed; its tests are skipped"; \
	fi

CHECK_SUITES += cli
check-cli: $(BUILD)/spulse $(BUILD)/cli-san/spulse $(BUILD)/tests/cli/spoolgen \
		$(BUILD)/tests/cli/top_writer $(CLI_SPEEDSCOPE_INDEX)
	@mkdir -p $(BUILD)/check
	@BUILD=$(BUILD) CC="$(CC)" $(TOP)/tests/cli/run.sh \
		$(BUILD)/spulse $(BUILD)/cli-san/spulse

# ---- benchmarks --------------------------------------------------------
# Every fragment appends its benchmark targets to BENCH_TARGETS; `make
# bench` runs them all in order. Recipes expand late, so targets appended by
# fragments included after this one are seen. Their output is kept in
# $(BUILD)/bench/bench.log; at the end the lines that start with "target"
# (the issues' targets, each with its verdict) and the Replay RSS line are
# printed again, together.
BENCH_TARGETS += bench-cli
BENCH_LOG := $(BUILD)/bench/bench.log
bench:
	@mkdir -p $(dir $(BENCH_LOG)); rm -f $(BENCH_LOG) $(BENCH_LOG).failed
	@for t in $(BENCH_TARGETS); do \
		{ $(MAKE) --no-print-directory $$t 2>&1 || echo $$t > $(BENCH_LOG).failed; } | \
			tee -a $(BENCH_LOG); \
		[ ! -e $(BENCH_LOG).failed ] || { echo "bench: $$t failed"; exit 1; }; \
	done
	@echo; echo "== make bench: every verdict line (MET / NOT MET / INCONCLUSIVE), as printed above =="; \
		grep -wE 'MET|INCONCLUSIVE' $(BENCH_LOG) || echo "(no target lines)"

CLI_BENCH_DIR := $(BUILD)/bench
CLI_BENCH_SAMPLES ?= 10000000

$(CLI_BENCH_DIR)/bench_cli: $(TOP)/bench/bench_cli.c $(CLI_LIB) $(CLI_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -o $@ $< $(CLI_LIB)

bench-cli: $(BUILD)/spulse $(CLI_BENCH_DIR)/bench_cli
	@$(CLI_BENCH_DIR)/bench_cli $(BUILD)/spulse $(CLI_BENCH_DIR) \
		$(CLI_BENCH_SAMPLES)

# bench-report (issue 9): spulse report / flame --folded / export --format
# pprof against perf report --stdio / perf script on perf.data files that
# hold the same samples (bench/perfdata_gen.c writes them from the spools):
# the VM-recorded demo.spulse (`make demo`; skipped when missing), a real
# perf.data of build/workload/gt recorded here by perf (its samples turned
# into a spool by bench/perf_to_spool.py) and a REPORT_BENCH_SAMPLES
# synthetic spool (REPORT_BENCH_SPOOLS picks). Prints medians of
# interleaved runs.
REPORT_BENCH_SAMPLES ?= 10000000
REPORT_BENCH_RUNS ?= 3
BENCH_TARGETS += bench-report
.PHONY: bench-report

$(CLI_BENCH_DIR)/perfdata_gen: $(TOP)/bench/perfdata_gen.c $(CLI_LIB) $(CLI_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -o $@ $< $(CLI_LIB)

REPORT_BENCH_SPOOLS ?= demo,perf,synth
# VM-recorded spools (comma-separated; the first is the demo's), e.g.
# REPORT_BENCH_REAL=$(TOP)/demo.spulse,/tmp/s4-vm/bench.spulse
REPORT_BENCH_REAL ?= $(TOP)/demo.spulse
bench-report: $(BUILD)/spulse $(CLI_BENCH_DIR)/perfdata_gen \
		$(BUILD)/tests/cli/spoolgen $(BUILD)/workload/gt
	@python3 $(TOP)/bench/bench_report.py --spulse $(BUILD)/spulse \
		--perfdata-gen $(CLI_BENCH_DIR)/perfdata_gen --dir $(CLI_BENCH_DIR) \
		--samples $(REPORT_BENCH_SAMPLES) --runs $(REPORT_BENCH_RUNS) \
		--real $(REPORT_BENCH_REAL) --spools $(REPORT_BENCH_SPOOLS) \
		--perf-cmd $(BUILD)/workload/gt --spoolgen $(BUILD)/tests/cli/spoolgen
