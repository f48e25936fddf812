# libspulse-unwind (user/unwind -> build/libspulse-unwind.a): unwind tables
# built from an ELF file's CFI with elfutils libdw, linked into the spulse
# CLI (`spulse unwind`); its test suite "unwind". See docs/UNWIND.md.
#
# Users of the library compile with $(UNWIND_CFLAGS) (-I for
# unwind_build.h) and link $(UNWIND_A) $(UNWIND_LDLIBS).

UNWIND_A := $(BUILD)/libspulse-unwind.a
UNWIND_SAN_A := $(BUILD)/asan/libspulse-unwind.a
UNWIND_SRCS := $(sort $(wildcard $(TOP)/user/unwind/*.c))
UNWIND_OBJS := $(patsubst $(TOP)/user/unwind/%.c,$(BUILD)/unwind/%.o,$(UNWIND_SRCS))
UNWIND_SAN_OBJS := $(patsubst $(TOP)/user/unwind/%.c,$(BUILD)/unwind-san/%.o,$(UNWIND_SRCS))
UNWIND_HDRS := $(wildcard $(TOP)/user/unwind/*.h) $(TOP)/include/spulse/unwind.h \
	$(TOP)/include/spulse/types.h
UNWIND_CFLAGS := -I$(TOP)/user/unwind
UNWIND_LDLIBS := -ldw -lelf

.PHONY: unwind check-unwind

ALL_TARGETS += $(UNWIND_A)
unwind: $(UNWIND_A)

$(BUILD)/unwind/%.o: $(TOP)/user/unwind/%.c $(UNWIND_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -c -o $@ $<

$(BUILD)/unwind-san/%.o: $(TOP)/user/unwind/%.c $(UNWIND_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(SAN_CFLAGS) -c -o $@ $<

$(UNWIND_A): $(UNWIND_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(UNWIND_SAN_A): $(UNWIND_SAN_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

# The CLI's `spulse unwind` (user/cli/cmd_unwind.c).
CLI_EXTRA_OBJS += $(UNWIND_A)
CLI_EXTRA_LDLIBS += $(UNWIND_LDLIBS)
$(BUILD)/spulse $(BUILD)/cli-san/spulse: $(UNWIND_A)
$(BUILD)/cli/cmd_unwind.o $(BUILD)/cli-san/cmd_unwind.o: $(UNWIND_HDRS)
$(BUILD)/cli/cmd_unwind.o $(BUILD)/cli-san/cmd_unwind.o: USER_CFLAGS += $(UNWIND_CFLAGS)
