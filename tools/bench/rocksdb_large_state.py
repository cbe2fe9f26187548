#!/usr/bin/env python3
"""Issue 45's large-state check: a keyed tumbling count over more keys than memory holds, on the
RocksDB state backend under an address-space limit, with the same results as the heap backend.

  tools/bench/rocksdb_large_state.py --tidemark build/release/tools/tidemark
      [--keys 30000000] [--count 60000000] [--limit 2147483648] [--budget 512mb]
      [--heap] [--expect CHECKSUM] [--localdir DIR] [--json FILE]

The job: generator (`key = Mix(i) % keys`, one record per ms) -> keyBy(key) -> tumbling 30000 s
count -> checksum sink, i.e. two windows of count/2 records each. The rocksdb run goes under
`prlimit --as=LIMIT` (virtual memory, which is what `ulimit -v` limits) with MALLOC_ARENA_MAX=2,
so glibc's per-thread malloc arenas do not reserve 64 MB of address space per thread.

Results are compared by the checksum sink's order-independent checksum of every (key, window,
count) row and its row count. The expected checksum is the heap backend's: --heap runs the heap
job too (it needs ~5 GB at 3e7 keys, no limit), --expect gives it, and at the default size the
value measured on 2026-12-06 is used. Prints one line per run (seconds, peak RSS, rows, checksum)
and exits 1 when a run fails or the checksums differ. --json FILE also writes the outcome as JSON
(`keys`, `records`, `limit_bytes`, `budget`, `expected_checksum`, `equal`, and per backend run
`wall_s`, `records_per_s`, `peak_rss_bytes`, `sink_records`, `checksum`, or `failed` with the
exit code and the end of stderr) for tools/bench/run_suite.py --large-state.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

# The heap backend's checksum sink output for the default size (30,000,000 keys, 60,000,000
# records; 37,932,183 rows), measured with --heap on 2026-12-06.
DEFAULT_EXPECTED = {(30000000, 60000000): "3954c690300fe9dc"}

JOB = """name: rocksdb_large_state
pipeline:
  parallelism: 1
  state-backend: {backend}
{rocksdb}operators:
  - id: source
    type: source
    source: {{type: generator, count: {count}, keys: {keys}}}
    watermarks: {{strategy: bounded-out-of-orderness, max-out-of-orderness: 0ms, timestamp-field: ts}}
  - id: windows
    type: window
    input: source
    key-by: key
    window: {{assigner: tumbling, size: 30000s, aggregate: [count]}}
  - id: sink
    type: sink
    input: windows
    sink: {{type: checksum}}
"""


def run(args, backend, tmp, limit, report):
    rocksdb = ""
    if backend == "rocksdb":
        rocksdb = f"  rocksdb: {{memory.fixed-per-slot: {args.budget}"
        if args.localdir:
            rocksdb += f", localdir: {args.localdir}"
        rocksdb += "}\n"
    path = os.path.join(tmp, f"large_state_{backend}.yaml")
    with open(path, "w") as f:
        f.write(JOB.format(backend=backend, rocksdb=rocksdb, count=args.count, keys=args.keys))
    cmd = [args.tidemark, "bench", path, "--json", "--runs", "1", "--warmup", "0",
           "--no-baselines", "--no-progress"]
    if limit:
        cmd = ["prlimit", f"--as={limit}", "--"] + cmd
    env = dict(os.environ, MALLOC_ARENA_MAX="2")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-4000:])
        print(f"{backend}: FAILED (exit {proc.returncode})")
        report[backend] = {"failed": proc.returncode, "stderr": proc.stderr[-4000:]}
        return None
    out = json.loads(proc.stdout)
    report[backend] = {k: out[k] for k in ("wall_s", "records_per_s", "peak_rss_bytes",
                                           "sink_records", "checksum")}
    print(f"{backend}: keys {args.keys} records {args.count} limit {limit or 'none'}: "
          f"{out['wall_s']:.1f} s, {out['records_per_s'] / 1e6:.2f} M records/s, peak RSS "
          f"{out['peak_rss_bytes'] / 2**20:.0f} MiB, {out['sink_records']} rows, "
          f"checksum {out['checksum']}", flush=True)
    return out["sink_records"], out["checksum"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tidemark", default="build/release/tools/tidemark")
    p.add_argument("--keys", type=int, default=30000000)
    p.add_argument("--count", type=int, default=60000000)
    p.add_argument("--limit", type=int, default=2147483648, help="address-space limit, bytes")
    p.add_argument("--budget", default="512mb", help="pipeline.rocksdb.memory.fixed-per-slot")
    p.add_argument("--localdir", default="", help="pipeline.rocksdb.localdir")
    p.add_argument("--heap", action="store_true", help="also run the heap backend and compare")
    p.add_argument("--expect", default="", help="the heap backend's checksum")
    p.add_argument("--json", default="", help="also write the outcome to this file as JSON")
    args = p.parse_args()
    report = {"keys": args.keys, "records": args.count, "limit_bytes": args.limit,
              "budget": args.budget, "equal": False}
    code = check(args, report)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return code


def check(args, report):
    """Runs the job(s) and compares; fills `report`; returns the exit code."""
    with tempfile.TemporaryDirectory(prefix="tidemark-large-state-") as tmp:
        expected = args.expect or DEFAULT_EXPECTED.get((args.keys, args.count))
        if args.heap:
            heap = run(args, "heap", tmp, 0, report)
            if heap is None:
                return 1
            expected = heap[1]
        if not expected:
            print("no expected checksum: pass --heap or --expect")
            return 1
        report["expected_checksum"] = expected
        rocks = run(args, "rocksdb", tmp, args.limit, report)
        if rocks is None:
            return 1
        if rocks[1] != expected:
            print(f"MISMATCH: rocksdb checksum {rocks[1]}, heap {expected}")
            return 1
        print("rocksdb results equal the heap backend's")
        report["equal"] = True
        return 0


if __name__ == "__main__":
    sys.exit(main())
