# Guest side of `make fault-relay-race` (tests/fault/run-relay-race.sh):
# ROUNDS rounds, each running relay_race once per reader (the order
# alternates), on a fresh load of spulse.ko with a 3 x 512-byte buffer.
# Appends one line per run to /out/relay-race.txt:
#   round I READER accepted A found F end E bytes B
# usage (via run-vm.sh): guest-relay-race.sh KO RELAY_RACE ROUNDS SECONDS
. "$VM_LIB"
ko=$1
race=$2
n=${3:-20}
secs=${4:-5}
D=/sys/kernel/debug/spulse
one() {
	sleep 600 & sl=$!
	hrun insmod "$ko" target_pid=$sl max_user_depth=1 max_kernel_depth=1 \
		subbuf_size=512 n_subbufs=3 autostart=1 || { kill $sl; return 1; }
	hrun sh -c "echo stop > $D/control"
	nv=0; [ "$2" = naive ] && nv=1
	r=$(hrun env RELAY_RACE_NAIVE=$nv "$race" $D/control $D/cpu0 "$secs" "$VM_OUT_HOST/race.bin")
	kb=$(hrun awk '$1 == "cpu0" { print $9 }' $D/stats)
	kill $sl; wait $sl 2>/dev/null
	hrun rmmod spulse
	# relay_race: accepted A refused R found F bytes B end E
	set -- $1 $2 $r
	echo "round $1 $2 accepted $5 found $9 end ${13} bytes $kb" >> /out/relay-race.txt
}
i=0
while [ $i -lt "$n" ]; do
	i=$((i + 1))
	if [ $((i % 2)) -eq 1 ]; then one $i drain; one $i naive
	else one $i naive; one $i drain; fi
	hrun rm -f "$VM_OUT_HOST/race.bin"
done
exit 0
