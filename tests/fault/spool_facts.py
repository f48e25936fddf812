#!/usr/bin/env python3
"""Facts about one spool for the fault campaign (tests/fault/run-fault.sh).

usage: spool_facts.py SPULSE FILE

Runs `SPULSE check --json FILE` and `SPULSE dump FILE` and prints one line
of key=value facts:
  valid=0|1 recovered=0|1 samples=N (check's count) dumped=N (samples in
  the dump) dups=N (samples whose (cpu, time_ns, tid) identity was seen
  before in the same file) bytes=N complete=N why=TEXT (check's error)
A valid file is one `spulse check` accepts (a truncated final record is
accepted and reported as recovered); its dump must show the same samples.
"""
import json
import subprocess
import sys


def main():
    spulse, path = sys.argv[1], sys.argv[2]
    facts = dict(valid=0, recovered=0, samples=0, dumped=0, dups=0,
                 bytes=0, complete=0, why="-")
    c = subprocess.run([spulse, "check", "--json", path],
                       capture_output=True, text=True)
    if c.returncode != 0:
        facts["why"] = (c.stderr.strip().splitlines() or ["rc %d" % c.returncode])[-1]
    else:
        j = json.loads(c.stdout)
        facts.update(valid=1, recovered=int(j["recovered"]),
                     samples=j["samples"], bytes=j["file_bytes"],
                     complete=j["complete_bytes"])
    d = subprocess.run([spulse, "dump", path], capture_output=True, text=True)
    tids, seen = {}, set()
    for line in d.stdout.splitlines():
        if line.startswith("thread "):
            f = dict(x.split("=", 1) for x in line.split()[1:] if "=" in x)
            tids[f["id"]] = f["tid"]
        elif line.startswith("sample "):
            f = dict(x.split("=", 1) for x in line.split()[1:] if "=" in x)
            key = (f.get("cpu"), f["time_ns"], tids.get(f["thread"]))
            facts["dumped"] += 1
            if key in seen:
                facts["dups"] += 1
            seen.add(key)
    if facts["valid"] and facts["dumped"] != facts["samples"]:
        facts["why"] = "dump shows %d samples, check %d (dump rc %d: %s)" % (
            facts["dumped"], facts["samples"], d.returncode,
            d.stderr.strip()[-200:])
        facts["valid"] = 0
    facts["why"] = facts["why"].replace(" ", "_")
    print(" ".join("%s=%s" % kv for kv in facts.items()))


main()
