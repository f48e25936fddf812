# Suite "demos" (tests/demos/run.sh): make demo, make demo-latency and make
# demo-unwind run as the README says (three VM boots, ~5 min under TCG),
# into $(BUILD)/demos/NAME instead of the top directory, and what each
# README block claims is checked on their output: demo.spulse valid with
# the workload's functions on top and its [vdso] frames named, demo.svg;
# the dump analysed holds the injected 120 ms stall (the flusher's
# slow_disk_write sleep and main's lock wait it ended), stall-offcpu.svg,
# stall.trace.json, the README's record command is the one run; a whole
# python3 stack to the thread entry, the coverage with tables and with
# frame pointers, the files the printed commands name. DEMOS="demo latency
# unwind" picks demos.
CHECK_SUITES += demos
.PHONY: check-demos
check-demos:
	@mkdir -p $(BUILD)/check
	@BUILD=$(BUILD) $(TOP)/tests/demos/run.sh
