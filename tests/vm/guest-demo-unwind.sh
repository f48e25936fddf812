# Guest side of make demo-unwind (tests/vm/demo-unwind.sh).
# usage: guest-demo-unwind.sh BIN SECONDS
. "$VM_LIB"
BIN=$1
SECS=$2
O=$VM_OUT_HOST
# the pre-built tables, in the guest's tmpfs (9p reads are slow under TCG)
rm -rf /host/tmp/unwind-cache
cp -r /out/cache /host/tmp/unwind-cache
hrun "$BIN/spulse" record --module "$BIN/spulse.ko" -F 999 --unwind-cache /tmp/unwind-cache \
	-o "$O/tables.spulse" -- /usr/bin/python3 "$BIN/unwind_work.py" "$SECS" \
	> /out/tables.log 2>&1 || exit 1
hrun "$BIN/spulse" record --module "$BIN/spulse.ko" -F 999 --unwind fp \
	-o "$O/fp.spulse" -- /usr/bin/python3 "$BIN/unwind_work.py" "$SECS" \
	> /out/fp.log 2>&1 || exit 1
exit 0
