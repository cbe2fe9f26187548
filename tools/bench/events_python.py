#!/usr/bin/env python3
"""The plain Python comparison for the events benchmarks (jobs/bench/events_*.yaml, issue 17).

  tools/bench/events_python.py scan|windowed EVENTS.jsonl [--window-ms 10000]

What a user might write instead of a stream job: `json.loads` per line and a dict. `scan` parses
every line and reads its four fields; `windowed` is the query of events_windowed.yaml: per user
and 10 s tumbling event-time window, the count and the sum of `amount` (every window is complete
at the end of the file; the generated file has nothing late). Prints one JSON object:
{"mode", "seconds", "records", "windows", "count_sum", "amount_sum"} (`windows` is the number of
result rows, to compare with the job's sink records).
"""
import argparse
import json
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["scan", "windowed"])
    ap.add_argument("path")
    ap.add_argument("--window-ms", type=int, default=10000)
    a = ap.parse_args()
    size = a.window_ms
    t0 = time.perf_counter()
    records = 0
    amount_sum = 0
    windows = {}
    with open(a.path, "rb") as f:
        if a.mode == "scan":
            for line in f:
                e = json.loads(line)
                row = (e["user"], e["ts"], e["amount"], e["page"])
                amount_sum += row[2]
                records += 1
        else:
            for line in f:
                e = json.loads(line)
                ts = e["ts"]
                key = (e["user"], ts - ts % size)
                w = windows.get(key)
                if w is None:
                    windows[key] = [1, e["amount"]]
                else:
                    w[0] += 1
                    w[1] += e["amount"]
                records += 1
            # Emit every window as a result row (here: fold them, as the checksum sink does).
            count_sum = 0
            for (user, start), (count, total) in windows.items():
                count_sum += count
                amount_sum += total
    seconds = time.perf_counter() - t0
    out = {"mode": a.mode, "seconds": seconds, "records": records,
           "windows": len(windows) if a.mode == "windowed" else None,
           "count_sum": count_sum if a.mode == "windowed" else records, "amount_sum": amount_sum}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
