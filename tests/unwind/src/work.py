# SPDX-License-Identifier: MIT
# Workload for ut_walk_preload.so in Debian's python3: pure-Python recursion,
# json and re (C extension code) for SECONDS of CPU time (argv[1], default 2).
import json
import re
import sys
import time


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


end = time.process_time() + (float(sys.argv[1]) if len(sys.argv) > 1 else 2.0)
while time.process_time() < end:
    fib(18)
    json.dumps({"a": [1, 2, 3] * 50, "b": {"c": "d" * 20}})
    re.sub(r"a+", "b", "caaat" * 100)
