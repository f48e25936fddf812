# Suite "lockdown" (tests/lockdown/run.sh): spulse.ko under kernel lockdown
# (integrity, as under UEFI Secure Boot) through /proc/spulse, the procfs
# twin of its debugfs directory; module signing with a throw-away key.
# Two short boots of the stock kernel (docs/KERNEL.md "Lockdown").

CHECK_SUITES += lockdown

.PHONY: check-lockdown

check-lockdown: vm-kernel
	@BUILD=$(BUILD) KDIR="$(KDIR)" $(TOP)/tests/lockdown/run.sh
