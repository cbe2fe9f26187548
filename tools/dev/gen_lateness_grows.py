#!/usr/bin/env python3
"""Writes jobs/data/lateness_grows.jsonl for jobs/lateness_grows_*.yaml (deterministic).

4000 records, one every 10 ms of event time from 100 s (record i is due at 100000 + 10 i ms and
arrives in that order), each delayed (event time = due - delay) by an exponential delay drawn
from a fixed 64-bit LCG: mean 100 ms (cut at 1 s) for the first 2000 records, mean 600 ms (cut at
6 s) for the last 2000. Keys cycle 0..3. Prints the lateness percentiles of each half.
"""
import math
import sys

def lcg(state):
    state = (state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
    return state, (state >> 11) / float(1 << 53)

def main(path):
    state = 18
    rows = []
    for i in range(4000):
        state, u = lcg(state)
        mean, cut = (100.0, 1000) if i < 2000 else (600.0, 6000)
        delay = min(cut, int(-mean * math.log(1.0 - u)))
        rows.append((100000 + 10 * i - delay, i % 4))
    with open(path, "w") as f:
        for ts, key in rows:
            f.write('{"ts": %d, "key": %d}\n' % (ts, key))
    top = -1
    late = []
    for ts, _ in rows:
        top = max(top, ts)
        late.append(top - ts)
    for name, part in (("first half", late[:2000]), ("second half", late[2000:]), ("all", late)):
        s = sorted(part)
        rank = lambda p: s[max(1, math.ceil(p / 100 * len(s) - 1e-9)) - 1]
        print(f"{name}: P50 {rank(50)} P90 {rank(90)} P99 {rank(99)} max {s[-1]} ms")

if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "jobs/data/lateness_grows.jsonl")
