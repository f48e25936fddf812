# spulse top-level Makefile.
#
#   make            build everything that exists (library, tools, module)
#   make check      run every test suite; ends with "N passed, N failed"
#   make demo       record the bundled workload in the VM (tests/vm)
#   make bench      benchmarks, printing tables
#
# Each part of the project owns a fragment in mk/*.mk. A fragment adds its
# build targets to ALL_TARGETS and its test suites to CHECK_SUITES; a suite
# "foo" is the target check-foo, which must write build/check/foo.result
# holding two numbers: "passed failed".

# kbuild includes this Makefile when invoked with M=; hand it to Kbuild.
ifneq ($(KERNELRELEASE),)
include $(src)/Kbuild
else

TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD ?= $(TOP)/build
CC ?= cc
OPT ?= -O2
WARN := -Wall -Wextra -Werror
USER_CFLAGS := $(OPT) -g -std=gnu11 $(WARN) -D_GNU_SOURCE \
	-I$(TOP)/include -I$(TOP)/user/include $(CFLAGS)
SAN_CFLAGS := -O1 -g -fno-omit-frame-pointer \
	-fsanitize=address,undefined -fno-sanitize-recover=all

ALL_TARGETS :=
CHECK_SUITES :=

.PHONY: all check bench clean
all: build-all

include $(sort $(wildcard $(TOP)/mk/*.mk))

build-all: $(ALL_TARGETS)

# The README's commands install their own Debian dependencies first.
.PHONY: install-deps
install-deps:
	@$(TOP)/scripts/install-deps.sh
check demo: install-deps

# Run last: the suites on the KUnit debug kernel (fault, kunit), which a
# cold machine builds meanwhile (tests/warm-caches.sh), and the SQL
# stores' suites, which also load the VM-recorded spools the e2e and
# record-vm suites leave in $(BUILD).
LATE_SUITES := fault kunit sql clickhouse
check:
	@$(TOP)/tests/run-suites.sh $(filter-out $(LATE_SUITES),$(CHECK_SUITES)) \
		$(foreach s,$(LATE_SUITES),$(filter $(s),$(CHECK_SUITES)))

clean:
	rm -rf $(BUILD)
	rm -f *.ko *.mod *.mod.c *.o .*.cmd modules.order Module.symvers
	find kmod -name '*.o' -o -name '.*.cmd' | xargs rm -f

endif
