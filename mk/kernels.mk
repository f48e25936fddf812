# The supported kernels (tests/kernels/kernels.list, docs/KERNELS.md): build
# spulse.ko against each, boot some. Kernels, headers and build chroots are
# fetched once into ~/.cache/spulse/ (tests/kernels/fetch.sh, chroot.sh).
#
#   make check-kernel-build   suite kernel-build: spulse.ko against EVERY
#                             listed kernel, one PASS/FAIL line per kernel
#                             with the time of each part
#   make check-kernel-boot    suite kernel-boot: boots the kernels marked
#                             "check" (6.12, 6.12-rt, 7.2) with the essentials
#                             (tests/kernels/guest-essentials.sh), one matrix
#                             row per kernel
#   make check-kernels        every kernel booted, the same essentials (not
#                             part of make check)
#   make kernel-module KERNEL=ID   build spulse.ko for one kernel into
#                             $(BUILD)/kernels/ID/

KERNELS_DIR := $(TOP)/tests/kernels
KERNELS_BOOT_DEPS := $(BUILD)/spulse $(BUILD)/spulse-drain workloads \
	$(BUILD)/workload/pingpong

CHECK_SUITES += kernel-build kernel-boot
.PHONY: check-kernel-build check-kernel-boot check-kernels kernel-module

check-kernel-build:
	@mkdir -p $(BUILD)/check
	@BUILD=$(BUILD) RESULT=$(BUILD)/check/kernel-build.result \
		$(KERNELS_DIR)/matrix.sh build

check-kernel-boot: $(KERNELS_BOOT_DEPS)
	@mkdir -p $(BUILD)/check
	@BUILD=$(BUILD) RESULT=$(BUILD)/check/kernel-boot.result \
		$(KERNELS_DIR)/matrix.sh boot check

check-kernels: $(KERNELS_BOOT_DEPS) check-dkms
	@mkdir -p $(BUILD)/check
	@BUILD=$(BUILD) RESULT=$(BUILD)/check/kernels.result \
		$(KERNELS_DIR)/matrix.sh boot all

kernel-module:
	@test -n "$(KERNEL)" || { echo "kernel-module: KERNEL=ID (one of: $$(sed -e 's/#.*//' -e '/^ *$$/d' $(KERNELS_DIR)/kernels.list | awk '{print $$1}' | tr '\n' ' '))" >&2; exit 2; }
	$(KERNELS_DIR)/build-module.sh $(KERNEL) $(BUILD)/kernels/$(KERNEL)
