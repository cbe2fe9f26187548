#!/usr/bin/python3
"""Independent computation of tests/golden/flights_airports.expected (left join) and
flights_airports_inner.expected (inner join), jobs/flights_airports*.yaml: reads
jobs/data/flights.csv and jobs/data/airports.csv with Python's csv, joins each flight's origin to
the airports' code with a dict, and compares with the golden rows. Run from the repository root;
exit 1 on a difference."""
import csv
import json
import sys

airports = {}
with open("jobs/data/airports.csv", newline="", encoding="utf-8") as f:
    for code, name, city in csv.reader(f):
        airports.setdefault(code, []).append((name, city))

failed = False
for golden, inner in (("flights_airports", False), ("flights_airports_inner", True)):
    rows = []
    with open("jobs/data/flights.csv", newline="") as f:
        for _ts, flight, origin, _dest, delay in csv.reader(f):
            matches = airports.get(origin, [])
            if not matches and inner:
                continue
            for name, city in matches or [(None, None)]:
                rows.append(json.dumps({
                    "flight": flight,
                    "origin": origin,
                    "origin_name": name,
                    "origin_city": city,
                    "delay_min": int(delay) if delay != "" else None,  # empty CSV field: NULL
                }, separators=(",", ":"), ensure_ascii=False))
    want = "\n".join(rows) + "\n"
    got = open(f"tests/golden/{golden}.expected", encoding="utf-8").read()
    if got != want:
        sys.stdout.write(f"{golden}.expected differs from the independent computation:\n" + want)
        failed = True
    else:
        print(f"{golden}.expected: {len(rows)} rows equal the independent computation")
sys.exit(1 if failed else 0)
