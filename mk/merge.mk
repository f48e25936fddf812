# spulse merge (issue 12): its tests are part of the cli suite
# (tests/cli/test_merge.sh, test_host.sh); the throughput bench is here.
BENCH_TARGETS += bench-merge
.PHONY: bench-merge
bench-merge: $(BUILD)/spulse
	@$(TOP)/bench/bench_merge.sh $(BUILD)/spulse $(BUILD)/bench/merge
