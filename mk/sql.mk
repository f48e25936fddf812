# spulse sql (issue 12 Deliver 3): spools into SQLite with query views
# (user/cli/cmd_sql.c, user/store/sql_*.c; docs/FLEET.md), its test suite
# "sql" (tests/sql/) and the ingest benchmark (make bench-sql).

CLI_EXTRA_LDLIBS += -lsqlite3

# Until libspulse has the recording-identity calls (issue 12 contract),
# every spool is one recording of host "unknown"; once the header declares
# them the loader uses them.
SQL_HAVE_IDENTITY := $(shell grep -q spulse_defs_identity_count \
	$(TOP)/user/include/libspulse.h 2>/dev/null && echo 1)
ifeq ($(SQL_HAVE_IDENTITY),1)
$(BUILD)/store/sql_db.o $(BUILD)/store-san/sql_db.o: USER_CFLAGS += -DSQL_HAVE_IDENTITY
endif

.PHONY: check-sql bench-sql

CHECK_SUITES += sql
check-sql: $(BUILD)/spulse $(BUILD)/cli-san/spulse $(BUILD)/tests/cli/spoolgen
	@mkdir -p $(BUILD)/check
	@BUILD=$(BUILD) CC="$(CC)" $(TOP)/tests/sql/run.sh \
		$(BUILD)/spulse $(BUILD)/cli-san/spulse

SQL_BENCH_SAMPLES ?= 10000000
BENCH_TARGETS += bench-sql
bench-sql: $(BUILD)/spulse
	@mkdir -p $(BUILD)/bench/sql
	@$(TOP)/bench/bench_sql.sh $(BUILD)/spulse $(BUILD)/bench/sql \
		$(SQL_BENCH_SAMPLES)
