# SPDX-License-Identifier: MIT
# Workload for ut_walk_preload.so in Debian's python3: pure-Python recursion,
# json and re (C extension code) for SECONDS of CPU time (argv[1], default 2).
# With UT_WALK_WAIT set it first signals the preloaded walker (SIGUSR2) and
# gives it half a second to build its tables.
import json
import os
import re
import signal
import sys
import time


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


# ut_walk_preload.so (UT_WALK_WAIT) builds its tables now: the modules
# above are loaded.
if os.environ.get("UT_WALK_WAIT"):
    os.kill(os.getpid(), signal.SIGUSR2)
    time.sleep(0.5)
end = time.process_time() + (float(sys.argv[1]) if len(sys.argv) > 1 else 2.0)
while time.process_time() < end:
    fib(18)
    json.dumps({"a": [1, 2, 3] * 50, "b": {"c": "d" * 20}})
    re.sub(r"a+", "b", "caaat" * 100)
