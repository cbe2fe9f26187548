#!/usr/bin/python3
"""Independent computation of tests/golden/flights_delays.expected (jobs/flights_delays.yaml):
reads jobs/data/flights.csv with Python's csv and datetime, applies what the job's functions mean
in Flink SQL, and compares with the golden rows. Run from the repository root; exit 1 on a
difference."""
import csv
import datetime
import json
import sys

rows = []
with open("jobs/data/flights.csv", newline="") as f:
    for ts, flight, origin, dest, delay in csv.reader(f):
        t = datetime.datetime.fromtimestamp(int(ts) / 1000, tz=datetime.timezone.utc)
        d = int(delay) if delay != "" else None  # an empty CSV field is NULL
        if d is None:
            cls = "cancelled"
        elif d >= 60:
            cls = "severe"
        elif d >= 15:
            cls = "late"
        else:
            cls = "on-time"
        rows.append(json.dumps({
            "flight": flight,
            "route": origin.lower() + "-" + dest.lower(),
            "departure": t.strftime("%Y-%m-%d %H:%M"),
            "delay_class": cls,
            "delay_text": str(d) if d is not None else "n/a",
            "hour": t.hour,
        }, separators=(",", ":"), ensure_ascii=False))
want = "\n".join(rows) + "\n"
got = open("tests/golden/flights_delays.expected").read()
if got != want:
    sys.stdout.write("golden differs from the independent computation:\n" + want)
    sys.exit(1)
print(f"flights_delays.expected: {len(rows)} rows equal the independent computation")
