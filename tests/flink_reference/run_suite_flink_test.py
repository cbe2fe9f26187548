#!/usr/bin/env python3
"""tools/bench/run_suite.py's Flink side-by-side text for the RocksDB rows (issue 45), on two lines
`flink-reference.sh bench` printed (bench_sample.jsonl: tumbling_keys_1e6_rocksdb at 20,000
records with Flink's heap backend run beside its RocksDB one, and the heap job tumbling_keys_1e3).
No JVM: ctest label `unit`. Exit 0 when every check holds, 1 with the failed ones."""
import copy
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "bench"))
import run_suite  # noqa: E402

failures = []


def check(what, got, want):
    if got != want:
        failures.append(f"{what}:\n  got  {got!r}\n  want {want!r}")


with open(os.path.join(HERE, "bench_sample.jsonl")) as f:
    rocks, heap = (json.loads(line) for line in f)

check("backend cell, rocksdb", run_suite.flink_backend_cell(rocks),
      "RocksDB 64 MiB, HEAP timers; Flink heap 0.32 M/s, RocksDB 0.307 × it")
check("backend cell, heap", run_suite.flink_backend_cell(heap), "heap")
check("target text, rocksdb", run_suite.flink_rocksdb_text(rocks),
      "; Flink 2.3 on the same job, 20,000 records: its RocksDB 0.098 M/s, tidemark's 1.15 M/s = 11.7 × it; "
      "Flink's RocksDB 0.307 × Flink's heap (0.32 M/s)")
check("target text, without --flink", run_suite.flink_rocksdb_text(None), "")
check("target text, did not run", run_suite.flink_rocksdb_text({"error": "java not found"}),
      "; Flink 2.3's RocksDB did not run")

# Flink's two backends disagreeing is a mismatch, in the target row and in the table.
differ = copy.deepcopy(rocks)
differ["flink_heap_results_equal"] = False
check("same, heap differs", run_suite.flink_same(differ), False)
check("same", run_suite.flink_same(rocks), True)
no_instance = copy.deepcopy(rocks)
no_instance["flink"]["rocksdb"]["instances_seen_every_run"] = False
check("same, no RocksDB instance seen", run_suite.flink_same(no_instance), False)
check("table check, no RocksDB instance seen", run_suite.flink_section({"x": no_instance})[-3].endswith(
    "| Flink's state was not in RocksDB in every run |"), True)
check("target text, heap differs", run_suite.flink_rocksdb_text(differ).endswith(
    "(MISMATCH: Flink's heap backend made other results)"), True)

other = copy.deepcopy(heap)
other["checksum_equal"] = False
other["flink_checksum"] = "0123456789abcdef"
check("problem, checksums differ", run_suite.flink_problem(other), "MISMATCH: 1000 results, checksum 0123456789abcdef")

lines = run_suite.flink_section({"tumbling_keys_1e3": heap, "tumbling_keys_1e6_rocksdb": rocks,
                                 "tumbling_keys_1e6_rocksdb_fit": {"error": "exited 1"}})
rows = [line for line in lines if line.startswith("| tumbling_keys")]
check("table rows", rows, [
    "| tumbling_keys_1e3 | 20,000 | heap | 5.16 | 0.47 | 0.11 | 10.9 | 1,000 | ok |",
    "| tumbling_keys_1e6_rocksdb | 20,000 | RocksDB 64 MiB, HEAP timers; Flink heap 0.32 M/s, RocksDB 0.307 × it | "
    "1.15 | 0.098 | 0.064 | 11.7 | 19,817 | ok |",
    "| tumbling_keys_1e6_rocksdb_fit | — | — | — | — | — | — | — | did not run: exited 1 |",
])
header = [line for line in lines if line.startswith("| job |")]
check("table header", header, ["| job | records | Flink backend | tidemark M rec/s | Flink M rec/s | "
                               "Flink M rec/s (net runtime) | tidemark × Flink | results | check |"])

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("run_suite Flink RocksDB text: all checks hold")
