# The fault campaign (issue 10; tests/fault, docs/FAULT.md):
#   make check-fault   suite "fault", the CI form (docs/FAULT.md "Time"):
#                      20 SIGKILLs of spulse-drain / spulse record while
#                      recording and a full disk, in the stock-kernel VM;
#                      10 rmmods under load, 10-round CPU hotplug storms,
#                      target churn and pid reuse on the KUnit debug kernel
#   make fault-long    the same with 100 kills, 50 rmmods and 50 hotplug
#                      rounds, then a table of figures (kills, spools
#                      checked, samples, duplicates, splats); not in check
# FAULT_SEED=N replays the random kill / rmmod moments of a run (printed).

CHECK_SUITES += fault

.PHONY: check-fault fault-long fault-stops fault-relay-race

check-fault:
	@mkdir -p $(BUILD)/check
	@BUILD=$(BUILD) $(TOP)/tests/fault/run-fault.sh

fault-long:
	@mkdir -p $(BUILD)/check
	@BUILD=$(BUILD) FAULT_KILLS=$${FAULT_KILLS:-100} FAULT_RMMODS=$${FAULT_RMMODS:-50} \
		FAULT_HOTPLUG=$${FAULT_HOTPLUG:-50} FAULT_LONG=1 $(TOP)/tests/fault/run-fault.sh

# 40 flight-recorder stops + unloads while the target switches flat out
# (tests/fault/run-stops.sh; the TCG hang of text patching at stop);
# FAULT_STOPS_KIND=loads: insmod offcpu=1 + rmmod rounds (docs/VM.md)
fault-stops:
	@BUILD=$(BUILD) $(TOP)/tests/fault/run-stops.sh

# relay_race rounds per reader (spulse-drain's and a plain one) in the stock
# kernel (tests/fault/run-relay-race.sh; docs/FAULT.md, "Relay readers")
fault-relay-race:
	@BUILD=$(BUILD) $(TOP)/tests/fault/run-relay-race.sh
