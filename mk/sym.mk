# Symbolization tests (suite "sym": tests/sym/, docs/CLI.md "Symbolization")
# and the libraries the symbolizer (user/cli/sym_*.c) links.

CLI_EXTRA_LDLIBS += -ldebuginfod -liberty
