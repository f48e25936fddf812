# DKMS on every supported kernel (tests/kernels/kernels.list,
# docs/KERNELS.md "DKMS and Secure Boot signing"): a real dkms add, build
# (signed with a throw-away MOK key) and install of this tree's dkms.conf
# against each kernel's headers, in scratch trees (never /usr/src,
# /var/lib/dkms or /lib/modules), then tests/kernels/sign.sh signs each
# built module by hand with scripts/sign-file. One PASS/FAIL line per
# kernel. Part of the long runs, not of make check (not in CHECK_SUITES).
#
#   make check-dkms                 every listed kernel
#   make check-dkms KERNELS="6.1 7.2"   some of them

.PHONY: check-dkms
check-dkms:
	@mkdir -p $(BUILD)/check
	@RESULT=$(BUILD)/check/dkms.result $(TOP)/tests/kernels/dkms.sh $(KERNELS)
