# Symbolization (user/sym/: symbolize.c, sym_*.c; docs/CLI.md
# "Symbolization"): the libraries it links and its test suite "sym"
# (tests/sym/): test ELFs with known functions, inlines, C++ and Rust names,
# stripped copies with .gnu_debuglink / a build-id directory, a rebuilt
# variant (other build-id) and a local debuginfod.

CLI_EXTRA_LDLIBS += -ldebuginfod -liberty

SYM_T := $(BUILD)/tests/sym
SYM_SRC := $(TOP)/tests/sym
# The sym room's archive (mk/cli.mk) and the drainer's kallsyms copy, which
# the test calls directly.
SYM_A := $(BUILD)/sym/libsym.a
SYM_SAN_A := $(BUILD)/sym-san/libsym.a
SYM_LIB_SRCS := $(TOP)/user/drain/kallsyms_copy.c
SYM_LDLIBS := -ldw -lelf -ldebuginfod -liberty
SYM_ELF_CFLAGS := -O2 -g -Wall -Wextra -Werror -fPIE -pie

.PHONY: check-sym sym-elves

$(SYM_T)/test_sym: $(SYM_SRC)/test_sym.c $(SYM_LIB_SRCS) $(CLI_HDRS) \
		$(SYM_A) $(CLI_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -o $@ $< $(SYM_LIB_SRCS) $(SYM_A) $(CLI_LIB) \
		$(SYM_LDLIBS)

$(SYM_T)/test_sym-san: $(SYM_SRC)/test_sym.c $(SYM_LIB_SRCS) $(CLI_HDRS) \
		$(SYM_SAN_A) $(CLI_SAN_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(SAN_CFLAGS) -o $@ $< $(SYM_LIB_SRCS) \
		$(SYM_SAN_A) $(CLI_SAN_LIB) $(SYM_LDLIBS)

# Build-id of ELF $(1), hex.
sym_bid = $$(readelf -n $(1) | awk '/Build ID/ { print $$3 }')

$(SYM_T)/libsymlib.so: $(SYM_SRC)/symlib.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -Wall -Wextra -Werror -fPIC -shared -o $@ $<

$(SYM_T)/symprog: $(SYM_SRC)/symprog.c $(SYM_T)/libsymlib.so
	$(CC) $(SYM_ELF_CFLAGS) -o $@ $< -L$(SYM_T) -lsymlib \
		-Wl,-rpath,'$$ORIGIN'

$(SYM_T)/v1/symprog: $(SYM_SRC)/symprog.c $(SYM_T)/libsymlib.so
	@mkdir -p $(dir $@)
	$(CC) $(SYM_ELF_CFLAGS) -DSYM_VARIANT=1 -o $@ $< -L$(SYM_T) -lsymlib

$(SYM_T)/symcxx: $(SYM_SRC)/symcxx.cc
	@mkdir -p $(dir $@)
	$(CXX) $(SYM_ELF_CFLAGS) -o $@ $<

# Stripped copies: dl/ keeps a .gnu_debuglink to dl/symprog.debug; bid/ has
# none, its debug file sits in dbgroot/.build-id/xx/rest.debug; v1root holds
# the rebuilt variant's executable as .build-id/xx/rest; dbgd/ is what the
# test's debuginfod serves (variant 1 with its DWARF).
$(SYM_T)/stamp: $(SYM_T)/symprog $(SYM_T)/v1/symprog $(SYM_T)/symcxx
	rm -rf $(SYM_T)/dl $(SYM_T)/bid $(SYM_T)/dbgroot $(SYM_T)/v1root \
		$(SYM_T)/dbgd
	mkdir -p $(SYM_T)/dl $(SYM_T)/bid $(SYM_T)/dbgd
	objcopy --only-keep-debug $(SYM_T)/symprog $(SYM_T)/dl/symprog.debug
	cd $(SYM_T)/dl && objcopy --strip-all \
		--add-gnu-debuglink=symprog.debug ../symprog symprog
	objcopy --strip-all $(SYM_T)/symprog $(SYM_T)/bid/symprog
	b=$(call sym_bid,$(SYM_T)/symprog) && \
		d=$(SYM_T)/dbgroot/.build-id/$${b%"$${b#??}"} && \
		mkdir -p $$d && cp $(SYM_T)/dl/symprog.debug $$d/$${b#??}.debug
	b=$(call sym_bid,$(SYM_T)/v1/symprog) && \
		d=$(SYM_T)/v1root/.build-id/$${b%"$${b#??}"} && \
		mkdir -p $$d && cp $(SYM_T)/v1/symprog $$d/$${b#??}
	cp $(SYM_T)/v1/symprog $(SYM_T)/dbgd/symprog-v1
	touch $@

sym-elves: $(SYM_T)/stamp

CHECK_SUITES += sym
check-sym: $(SYM_T)/stamp $(SYM_T)/test_sym $(SYM_T)/test_sym-san \
		$(BUILD)/spulse $(BUILD)/cli-san/spulse $(BUILD)/tests/cli/spoolgen
	@mkdir -p $(BUILD)/check
	@BUILD=$(BUILD) SYMT=$(SYM_T) SYMSRC=$(SYM_SRC) $(SYM_SRC)/run.sh \
		$(SYM_T)/test_sym $(SYM_T)/test_sym-san -- \
		$(BUILD)/spulse $(BUILD)/cli-san/spulse

# Symbolization cost per distinct frame (libc + libc6-dbg), printed.
BENCH_TARGETS += bench-sym
.PHONY: bench-sym
bench-sym: $(BUILD)/spulse $(BUILD)/tests/cli/spoolgen
	@$(SYM_SRC)/bench.sh $(BUILD)/spulse $(BUILD)/tests/cli/spoolgen \
		$(BUILD)/bench/sym
