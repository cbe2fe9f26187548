#!/usr/bin/env python3
"""Checks `flink-reference.sh bench` lines (stdin) for the two RocksDB bench jobs (issue 45): Flink
ran its RocksDB backend with the job's budget as state.backend.rocksdb.memory.fixed-per-slot
(512 MiB for tumbling_keys_1e6_rocksdb_fit, tidemark's 64mb for tumbling_keys_1e6_rocksdb), heap
timers and the write-buffer ratio 0.5, a new RocksDB instance appeared in its local directory in
every run, and tidemark, Flink's RocksDB and Flink's heap backend made the same results.
Exit 0 when all hold, 1 naming what does not."""
import json
import sys

WANT = {"tumbling_keys_1e6_rocksdb_fit": 512 << 20, "tumbling_keys_1e6_rocksdb": 64 << 20}
failures = []
seen = set()
for line in sys.stdin:
    if not line.startswith("{"):
        continue
    o = json.loads(line)
    name = o.get("name")
    if name not in WANT:
        failures.append(f"unexpected job {name!r}")
        continue
    seen.add(name)
    rocks = o.get("flink", {}).get("rocksdb", {})
    got = {
        "state_backend": o.get("state_backend"),
        "flink.state_backend": o.get("flink", {}).get("state_backend"),
        "fixed-per-slot": rocks.get("state.backend.rocksdb.memory.fixed-per-slot"),
        "timer-service.factory": rocks.get("state.backend.rocksdb.timer-service.factory"),
        "write-buffer-ratio": rocks.get("state.backend.rocksdb.memory.write-buffer-ratio"),
        "localdir ends": str(rocks.get("state.backend.rocksdb.localdir", "")).endswith("/build/flink-reference/bench-rocksdb"),
        "instances_seen_every_run": rocks.get("instances_seen_every_run"),
        "counts_equal": o.get("counts_equal"),
        "checksum_equal": o.get("checksum_equal"),
        "flink_heap_results_equal": o.get("flink_heap_results_equal"),
        "heap rate > 0": o.get("flink_heap_records_per_s", 0) > 0,
    }
    want = {"state_backend": "rocksdb", "flink.state_backend": "rocksdb", "fixed-per-slot": WANT[name],
            "timer-service.factory": "HEAP", "write-buffer-ratio": 0.5, "localdir ends": True,
            "instances_seen_every_run": True, "counts_equal": True, "checksum_equal": True,
            "flink_heap_results_equal": True, "heap rate > 0": True}
    for k in want:
        if got[k] != want[k]:
            failures.append(f"{name}: {k} is {got[k]!r}, want {want[k]!r}")
for name in sorted(set(WANT) - seen):
    failures.append(f"{name}: no JSON line")
if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"flink-reference bench: {len(seen)} RocksDB jobs ran on Flink's RocksDB backend with their budgets")
