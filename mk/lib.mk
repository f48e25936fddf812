# libspulse (user/lib -> build/libspulse.a, build/libspulse.so), its test
# suites "unit", "asan", "fuzz", long fuzzing (make fuzz) and the library
# benchmark (make bench-lib). See docs/API.md.

LIBSPULSE_A := $(BUILD)/libspulse.a
LIBSPULSE_SO := $(BUILD)/libspulse.so

LIB_SRCS := $(sort $(wildcard $(TOP)/user/lib/*.c))
LIB_OBJS := $(patsubst $(TOP)/user/lib/%.c,$(BUILD)/lib/%.o,$(LIB_SRCS))
LIB_PIC_OBJS := $(patsubst $(TOP)/user/lib/%.c,$(BUILD)/lib/pic/%.o,$(LIB_SRCS))
LIB_SAN_OBJS := $(patsubst $(TOP)/user/lib/%.c,$(BUILD)/asan/lib/%.o,$(LIB_SRCS))
LIB_HDRS := $(wildcard $(TOP)/user/lib/*.h) $(TOP)/user/include/libspulse.h \
	$(wildcard $(TOP)/include/spulse/*.h)
LIB_CFLAGS = $(USER_CFLAGS) -fvisibility=hidden

ALL_TARGETS += $(LIBSPULSE_A) $(LIBSPULSE_SO)

.PHONY: lib check-unit check-asan check-fuzz fuzz bench-lib

lib: $(LIBSPULSE_A) $(LIBSPULSE_SO)

$(BUILD)/lib/%.o: $(TOP)/user/lib/%.c $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c -o $@ $<

$(BUILD)/lib/pic/%.o: $(TOP)/user/lib/%.c $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -fPIC -c -o $@ $<

$(BUILD)/asan/lib/%.o: $(TOP)/user/lib/%.c $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) $(SAN_CFLAGS) -c -o $@ $<

$(LIBSPULSE_A): $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(LIBSPULSE_SO): $(LIB_PIC_OBJS)
	$(CC) $(LIB_CFLAGS) -shared -Wl,-soname,libspulse.so.0 -o $@ $^

# The library built with ASan+UBSan, for the asan suite and sanitized tools.
LIBSPULSE_SAN_A := $(BUILD)/asan/libspulse.a
$(LIBSPULSE_SAN_A): $(LIB_SAN_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^
