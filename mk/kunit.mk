# KUnit suites on the debug test kernel (tests/kunit, docs/KUNIT.md).
#
#   make kunit          build/reuse the debug kernel, build spulse.ko and
#                       spulse_kunit.ko against it, run the suites in QEMU
#   make kunit-kernel   only build/reuse the debug kernel
#   make check-kunit    the same as `make kunit`, as suite "kunit"
#
# The kernel is cached under ~/.cache/spulse/kunit-<pkgver>-<confighash>/.

CHECK_SUITES += kunit

.PHONY: kunit kunit-kernel check-kunit
kunit:
	@BUILD=$(BUILD) $(TOP)/tests/kunit/run-kunit.sh

kunit-kernel:
	@$(TOP)/tests/kunit/build-kernel.sh

check-kunit: kunit
