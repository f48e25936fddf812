# ClickHouse at fleet scale (issue 12): spulse push / report --clickhouse /
# flame --clickhouse over ClickHouse's HTTP interface (libcurl), the test
# suite "clickhouse" (tests/clickhouse/: a private clickhouse-server
# started by the test) and make bench-clickhouse. docs/FLEET.md.

CLI_EXTRA_LDLIBS += -lcurl

# Identity records (issue 12 contract) once libspulse declares them.
ifneq ($(shell grep -l spulse_defs_identity $(TOP)/user/include/libspulse.h 2>/dev/null),)
$(BUILD)/cli/cmd_push.o $(BUILD)/cli-san/cmd_push.o: USER_CFLAGS += -DCH_HAVE_IDENTITY
endif

.PHONY: check-clickhouse bench-clickhouse
CHECK_SUITES += clickhouse
check-clickhouse: $(BUILD)/spulse $(BUILD)/cli-san/spulse
	@mkdir -p $(BUILD)/check
	@BUILD=$(BUILD) $(TOP)/tests/clickhouse/run.sh \
		$(BUILD)/spulse $(BUILD)/cli-san/spulse

# Not part of make bench's list (it synthesizes 50M samples): run by hand.
bench-clickhouse: $(BUILD)/spulse
	@BUILD=$(BUILD) $(TOP)/bench/bench_clickhouse.sh $(BUILD)/spulse
