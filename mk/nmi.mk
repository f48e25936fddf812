# Suite nmi (issue 21 item 2; tests/nmi/, docs/RT.md): the sample path in
# NMI context on the KUnit debug kernel. spulse.ko event=bp samples from
# perf hardware breakpoints (x86 runs a kernel-mode #DB as an NMI):
# watchpoints on jiffies (tick hardirq), total_forks (copy_process) and
# tk_fast_mono (read inside spulse's own scheduler probes), an execute
# breakpoint at pipe_read where the kernel has kprobes; with off-CPU
# recording, flushes, triggers and unwind-table churn; refused parameters;
# zero splats.
#
#   make check-nmi   suite "nmi" (NMI_SECS per phase, default 15)
#   make nmi-rt      the same on the PREEMPT_RT debug kernel (not in check)

# Not in CHECK_SUITES: its VM took 475 s (and its module build 321 s) on
# this session's load-20 host, beyond the ~3 minutes a make check suite
# may add; run it as make check-nmi (writes $(BUILD)/check/nmi.result).
.PHONY: check-nmi

check-nmi:
	@mkdir -p $(BUILD)/check
	@BUILD=$(BUILD) $(TOP)/tests/nmi/run.sh

# The same on the PREEMPT_RT debug kernel (tests/rt/rt.config; not in make
# check: a cold build of that kernel is 30+ minutes, see mk/rt.mk)
.PHONY: nmi-rt
nmi-rt:
	@mkdir -p $(BUILD)/check
	@BUILD=$(BUILD) NMI_KERNEL=rt $(TOP)/tests/nmi/run.sh
