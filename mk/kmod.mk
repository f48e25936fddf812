# spulse.ko: the kernel module (kmod/, Kbuild), see docs/KERNEL.md.
#
#   make module           build $(TOP)/spulse.ko against KDIR
#   make deps             apt-get install what building the module needs
#   make install          module (+ depmod) and build/spulse{,-drain}
#                         (INSTALL_MOD_PATH=, DESTDIR=, PREFIX= for staging)
#   make check-kmod-lint  W=1, sparse (C=2), checkpatch and kernel-doc -v,
#                         zero findings
#
# KDIR defaults to the running kernel's build tree when it exists, else the
# newest Debian headers under /usr/src (the host may run a kernel without
# headers; the VM runs Debian's stock kernel).

ifeq ($(origin KDIR),undefined)
KDIR := $(shell d=/lib/modules/$$(uname -r)/build; \
	if [ -f $$d/Makefile ]; then echo $$d; else \
	ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n1; fi)
endif
KMOD_KO := $(TOP)/spulse.ko
KMOD_DEPS := $(wildcard $(TOP)/kmod/*.c $(TOP)/kmod/*.h \
	$(TOP)/include/spulse/*.h) $(TOP)/Kbuild
KMOD_MAKE = $(MAKE) --no-print-directory -C $(KDIR) M=$(TOP)
KMOD_APT := linux-headers-amd64 kmod sparse perl xz-utils make gcc
KMOD_CACHE := $(or $(SPULSE_CACHE),$(HOME)/.cache/spulse)/checkpatch
KMOD_CHECKPATCH := $(KMOD_CACHE)/linux-source-6.1/scripts/checkpatch.pl
KMOD_KERNELDOC := $(KMOD_CACHE)/linux-source-6.1/scripts/kernel-doc
PREFIX ?= /usr/local

ifneq ($(KDIR),)
ifneq ($(wildcard $(KDIR)/Makefile),)
ALL_TARGETS += $(KMOD_KO)
endif
endif
CHECK_SUITES += kmod-lint

.PHONY: module deps install check-kmod-lint

module: $(KMOD_KO)

$(KMOD_KO): $(KMOD_DEPS)
	@test -f "$(KDIR)/Makefile" || { \
		echo "kmod: no kernel build tree (KDIR='$(KDIR)'); run make deps" >&2; \
		exit 1; }
	+$(KMOD_MAKE) modules

deps::
	@missing=; for p in $(KMOD_APT); do \
		dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "kmod: apt-get install$$missing"; \
		apt-get install -y --no-install-recommends $$missing; \
	else echo "kmod: build dependencies present"; fi

install:: $(KMOD_KO) $(BUILD)/spulse $(BUILD)/spulse-drain
	+$(KMOD_MAKE) INSTALL_MOD_DIR=extra modules_install
	depmod $(if $(INSTALL_MOD_PATH),-b $(INSTALL_MOD_PATH)) -a \
		$$(modinfo -F vermagic $(KMOD_KO) | cut -d' ' -f1)
	install -D -m 0755 $(BUILD)/spulse $(DESTDIR)$(PREFIX)/bin/spulse
	install -D -m 0755 $(BUILD)/spulse-drain \
		$(DESTDIR)$(PREFIX)/bin/spulse-drain

$(KMOD_CHECKPATCH):
	@mkdir -p $(KMOD_CACHE)
	tar -C $(KMOD_CACHE) -xJf /usr/src/linux-source-6.1.tar.xz \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
	@touch $@

$(KMOD_KERNELDOC):
	@mkdir -p $(KMOD_CACHE)
	tar -C $(KMOD_CACHE) -xJf /usr/src/linux-source-6.1.tar.xz \
		linux-source-6.1/scripts/kernel-doc
	@touch $@

check-kmod-lint: $(KMOD_CHECKPATCH) $(KMOD_KERNELDOC)
	@KDIR="$(KDIR)" TOP="$(TOP)" BUILD="$(BUILD)" \
		CHECKPATCH="$(KMOD_CHECKPATCH)" KERNELDOC="$(KMOD_KERNELDOC)" \
		MAKE="$(MAKE)" $(TOP)/tests/kmod/lint.sh

# Boot the test VM, exercise the module (tests/kmod/vm-smoke.sh) and assert on
# what it saved (tests/kmod/vm-smoke-check.sh: refusals, stats invariant, every
# stream passes `spulse check`, meta contents (exec deactivation + new
# modules, Python enter/leave), CPU hotplug while recording, clean dmesg).
# Also run by `make check` as suite kmod-vm.
.PHONY: kmod-vm-smoke
kmod-vm-smoke: $(KMOD_KO) $(BUILD)/spulse $(BUILD)/spulse-drain workloads \
		$(BUILD)/workload/pingpong
	@rm -rf $(BUILD)/kmod-vm && mkdir -p $(BUILD)/kmod-vm
	$(TOP)/tests/vm/run-vm.sh --timeout 400 --out $(BUILD)/kmod-vm -- \
		$(TOP)/tests/kmod/vm-smoke.sh $(BUILD)
	@cat $(BUILD)/kmod-vm/guest.log
	@$(TOP)/tests/kmod/vm-smoke-check.sh $(BUILD)/kmod-vm $(BUILD)/spulse

CHECK_SUITES += kmod-vm
.PHONY: check-kmod-vm
check-kmod-vm:
	@mkdir -p $(BUILD)/check
	@$(MAKE) --no-print-directory kmod-vm-smoke > $(BUILD)/check/kmod-vm.log 2>&1; \
	rc=$$?; cat $(BUILD)/check/kmod-vm.log; \
	sed -n 's/^kmod-vm-smoke: \([0-9]*\) passed, \([0-9]*\) failed$$/\1 \2/p' \
		$(BUILD)/check/kmod-vm.log > $(BUILD)/check/kmod-vm.result; \
	exit $$rc

# In-kernel cost: the gt workload's fixed work with and without spulse.ko
# (no drainer), three times each, in one VM boot. Prints the times.
.PHONY: kmod-vm-overhead
kmod-vm-overhead: $(KMOD_KO) workloads
	@rm -rf $(BUILD)/kmod-vm-overhead && mkdir -p $(BUILD)/kmod-vm-overhead
	@$(TOP)/tests/vm/run-vm.sh --timeout 600 --out $(BUILD)/kmod-vm-overhead \
		-- $(TOP)/tests/kmod/vm-overhead.sh $(BUILD) && \
		cat $(BUILD)/kmod-vm-overhead/guest.log

# Off-CPU scenarios alone (tests/kmod/vm-offcpu.sh, also run by kmod-vm-smoke):
# bad offcpu params, a sleeping python3, pingpong raw and drained, a tiny
# table/buffer, rmmod while recording, offcpu=0; host checks in
# tests/kmod/vm-offcpu-check.sh (+ .py: stacks, wakers, trigger, cpu records).
.PHONY: kmod-vm-offcpu
kmod-vm-offcpu: $(KMOD_KO) $(BUILD)/spulse $(BUILD)/spulse-drain workloads \
		$(BUILD)/workload/pingpong
	@rm -rf $(BUILD)/kmod-vm-offcpu && mkdir -p $(BUILD)/kmod-vm-offcpu
	$(TOP)/tests/vm/run-vm.sh --timeout 400 --out $(BUILD)/kmod-vm-offcpu -- \
		$(TOP)/tests/kmod/vm-offcpu.sh $(BUILD)
	@cat $(BUILD)/kmod-vm-offcpu/guest.log
	@$(TOP)/tests/kmod/vm-offcpu-check.sh $(BUILD)/kmod-vm-offcpu $(BUILD)/spulse

# Unwind tables in the stock-kernel VM with hand-made tables
# (tests/kmod/vm-unwind-smoke.sh + vm-unwind.py; checks in tests/kmod/vm-unwind-check.sh):
# unwind= / unwind_mem_kb= refusals, message refusals, END / UNKNOWN / NONE
# rows in tables, fp and auto mode, DEL while recording, the memory bound,
# rmmod with tables loaded, clean dmesg. Not part of make check (issue 8's
# suites with real tables are tests/e2e's).
.PHONY: kmod-vm-unwind
kmod-vm-unwind: $(KMOD_KO) workloads
	@rm -rf $(BUILD)/kmod-vm-unwind && mkdir -p $(BUILD)/kmod-vm-unwind
	$(TOP)/tests/vm/run-vm.sh --timeout 500 --out $(BUILD)/kmod-vm-unwind -- \
		$(TOP)/tests/kmod/vm-unwind-smoke.sh $(BUILD)
	@cat $(BUILD)/kmod-vm-unwind/guest.log
	@$(TOP)/tests/kmod/vm-unwind-check.sh $(BUILD)/kmod-vm-unwind

# Suite kmod-vm-unwind: the unwind-table path of spulse.ko in the stock VM
# with hand-made tables (tests/kmod/vm-unwind-smoke.sh, vm-unwind-check.sh).
CHECK_SUITES += kmod-vm-unwind
.PHONY: check-kmod-vm-unwind
check-kmod-vm-unwind:
	@mkdir -p $(BUILD)/check
	@$(MAKE) --no-print-directory kmod-vm-unwind > $(BUILD)/check/kmod-vm-unwind.log 2>&1; \
	rc=$$?; cat $(BUILD)/check/kmod-vm-unwind.log; \
	sed -n 's/^kmod-vm-unwind: \([0-9]*\) passed, \([0-9]*\) failed$$/\1 \2/p' \
		$(BUILD)/check/kmod-vm-unwind.log > $(BUILD)/check/kmod-vm-unwind.result; \
	exit $$rc

# handler_ns per sample: unwind tables (hand-made, UNWIND_BENCH_ROWS rows of
# the frame-pointer body rule) vs the frame-pointer walk on gt, one boot,
# interleaved runs (tests/kmod/vm-unwind-bench.sh). Prints the runs and a table.
UNWIND_BENCH_ROWS ?= 4096
.PHONY: kmod-vm-unwind-bench
kmod-vm-unwind-bench: $(KMOD_KO) workloads
	@rm -rf $(BUILD)/kmod-vm-unwind-bench && mkdir -p $(BUILD)/kmod-vm-unwind-bench
	@$(TOP)/tests/vm/run-vm.sh --timeout 600 --out $(BUILD)/kmod-vm-unwind-bench \
		-- $(TOP)/tests/kmod/vm-unwind-bench.sh $(BUILD) $(UNWIND_BENCH_ROWS)
	@awk '/^run / { m = $$3; for (i = 4; i < NF; i += 2) v[m, $$i] += $$(i + 1); } \
	END { printf "%-7s %9s %12s %10s %12s %10s\n", "mode", "samples", "handler_ns", "ns/sample", "frames/smpl", "complete"; \
	for (k = 0; k < 2; k++) { m = k ? "tables" : "fp"; s = v[m, "samples_taken"]; \
	printf "%-7s %9d %12d %10.0f %12.1f %10d\n", m, s, v[m, "handler_ns"], \
	s ? v[m, "handler_ns"] / s : 0, \
	s ? 1 + (v[m, "ustack_table_steps"] + v[m, "ustack_fp_steps"]) / s : 0, \
	v[m, "ustack_complete"]; } }' $(BUILD)/kmod-vm-unwind-bench/guest.log

# Suite kmod-vm-target: the target by its struct pid (target exits: stop,
# stats, dmesg, restart refused, a process reusing the pid not sampled;
# target_pid named in a child pid namespace; the same number in a child
# namespace not sampled) and kernel lockdown (raised at run time: debugfs
# refuses control/cpuN/meta, stats says so; a boot with lockdown=integrity
# refuses the unsigned module). tests/kmod/vm-target.sh, vm-target-lock.sh,
# vm-target-check.sh; two VM boots.
.PHONY: kmod-vm-target check-kmod-vm-target
kmod-vm-target: $(KMOD_KO) $(BUILD)/spulse workloads
	@rm -rf $(BUILD)/kmod-vm-target && mkdir -p $(BUILD)/kmod-vm-target/lock
	$(TOP)/tests/vm/run-vm.sh --timeout 400 --out $(BUILD)/kmod-vm-target -- \
		$(TOP)/tests/kmod/vm-target.sh $(BUILD)
	@cat $(BUILD)/kmod-vm-target/guest.log
	$(TOP)/tests/vm/run-vm.sh --timeout 200 --append lockdown=integrity \
		--out $(BUILD)/kmod-vm-target/lock -- $(TOP)/tests/kmod/vm-target-lock.sh
	@cat $(BUILD)/kmod-vm-target/lock/guest.log
	@$(TOP)/tests/kmod/vm-target-check.sh $(BUILD)/kmod-vm-target $(BUILD)/spulse \
		$(BUILD)/kmod-vm-target/lock

CHECK_SUITES += kmod-vm-target
check-kmod-vm-target:
	@mkdir -p $(BUILD)/check
	@$(MAKE) --no-print-directory kmod-vm-target > $(BUILD)/check/kmod-vm-target.log 2>&1; \
	rc=$$?; cat $(BUILD)/check/kmod-vm-target.log; \
	sed -n 's/^kmod-vm-target: \([0-9]*\) passed, \([0-9]*\) failed$$/\1 \2/p' \
		$(BUILD)/check/kmod-vm-target.log > $(BUILD)/check/kmod-vm-target.result; \
	exit $$rc
