#!/usr/bin/env python3
"""Garbage and flood test for tidemarkd (slow: minutes; ctest label `slow`).

Starts tidemarkd on a private socket, then for DURATION seconds runs garbage clients (random
bytes, random HTTP-looking prefixes, oversize and truncated requests, a chunk-size line that never ends, pipelined requests never
read, connections left open) beside well-behaved clients that submit the two-split experiment and
check its exact report. Every second it samples the daemon's RSS and times a `GET /jobs`.

Fails (exit 1) when a `GET /jobs` took more than 2 s or failed, an experiment job's report was not
exact, the daemon died, or its RSS went above --rss-bound-mb.

    tools/dev/daemon_flood.py [--build build/release] [--duration 300] [--rss-bound-mb 64]
"""

import argparse
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def request(sock_path, method, target, body=b"", timeout=5.0):
    """One HTTP/1.1 request with Connection: close; returns (status, body)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(sock_path)
        head = f"{method} {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {len(body)}\r\n\r\n"
        s.sendall(head.encode() + body)
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    finally:
        s.close()
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else -1
    return status, data.split(b"\r\n\r\n", 1)[-1]


def garbage_client(sock_path, stop, rng, counts):
    prefixes = [b"", b"GET / HTTP/1.1\r\n", b"POST /jobs HTTP/1.1\r\nHost: x\r\n",
                b"POST /jobs HTTP/1.1\r\nContent-Length: 1000000000\r\n\r\n",
                b"POST /jobs HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nffffffff\r\n",
                b"POST /jobs HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1;" + b"a" * (4 << 20),  # endless line
                b"GET /jobs HTTP/1.1\r\nHost: x\r\n\r\n" * 200]  # pipelined, never read
    held = []
    while not stop.is_set():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(1.0)
        try:
            s.connect(sock_path)
            payload = rng.choice(prefixes) + rng.randbytes(rng.choice([0, 16, 1024, 65536, 1 << 20]))
            for i in range(0, len(payload), 65536):
                s.sendall(payload[i:i + 65536])
            counts["garbage"] += 1
            if rng.random() < 0.05 and len(held) < 50:
                held.append(s)  # left open, unread: the idle timeout must deal with it
                continue
            if rng.random() < 0.5:
                s.recv(4096)
        except OSError:
            pass
        s.close()
    for s in held:
        s.close()


def good_client(sock_path, stop, job, expected, counts, failures):
    while not stop.is_set():
        try:
            status, body = request(sock_path, "POST", "/jobs?file=flood.yaml", job)
            if status == 429:
                time.sleep(0.05)
                continue
            if status != 202:
                failures.append(f"submit answered {status}: {body[:200]!r}")
                continue
            jid = body.split(b'"jid": "')[1].split(b'"')[0].decode()
            for _ in range(500):
                status, body = request(sock_path, "GET", f"/jobs/{jid}")
                if b'"state": "FINISHED"' in body or b'"state": "FAILED"' in body or status == 404:
                    break
                time.sleep(0.01)
            if expected.encode() not in body:
                failures.append(f"job {jid} ended without the exact report: {body[:300]!r}")
            counts["jobs"] += 1
        except OSError as e:
            failures.append(f"good client: {e}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build/release"))
    ap.add_argument("--duration", type=float, default=300)
    ap.add_argument("--rss-bound-mb", type=float, default=64)
    ap.add_argument("--garbage-clients", type=int, default=8)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="tidemark-flood-")
    os.chmod(tmp, 0o700)
    sock_path = os.path.join(tmp, "d.sock")
    daemon = subprocess.Popen([os.path.join(args.build, "tools/tidemarkd"), "--socket", sock_path,
                               "--state-dir", os.path.join(tmp, "state"), "--idle-timeout", "5s", "--finished-job-ttl", "10s"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    daemon.stdout.readline()  # the ready line
    with open(os.path.join(ROOT, "jobs/two_splits_split.yaml"), "rb") as f:
        job = f.read()
    with open(os.path.join(ROOT, "tests/golden/two_splits_split.expected")) as f:
        expected = f.read().strip().splitlines()[-1]
    stop = threading.Event()
    counts = {"garbage": 0, "jobs": 0}
    failures = []
    threads = [threading.Thread(target=garbage_client, args=(sock_path, stop, random.Random(i), counts))
               for i in range(args.garbage_clients)]
    threads += [threading.Thread(target=good_client, args=(sock_path, stop, job, expected, counts, failures))
                for _ in range(2)]
    for t in threads:
        t.start()
    rss_mb = []
    slowest = 0.0
    start = time.time()
    while time.time() - start < args.duration and daemon.poll() is None:
        t0 = time.time()
        try:
            status, _ = request(sock_path, "GET", "/jobs", timeout=2.0)
            if status != 200:
                failures.append(f"GET /jobs answered {status}")
        except OSError as e:
            failures.append(f"GET /jobs at {t0 - start:.0f}s: {e}")
        slowest = max(slowest, time.time() - t0)
        with open(f"/proc/{daemon.pid}/status") as f:
            rss_mb.append(int(next(l for l in f if l.startswith("VmRSS:")).split()[1]) / 1024)
        time.sleep(max(0.0, 1.0 - (time.time() - t0)))
    stop.set()
    for t in threads:
        t.join()
    died = daemon.poll() is not None
    daemon.terminate()
    daemon.wait()
    print(f"duration={time.time() - start:.0f}s garbage_connections={counts['garbage']} jobs={counts['jobs']} "
          f"rss_mb: start {rss_mb[0]:.1f} max {max(rss_mb):.1f} end {rss_mb[-1]:.1f} (bound {args.rss_bound_mb}) "
          f"slowest GET /jobs {slowest * 1000:.0f} ms")
    if died:
        failures.append("the daemon died")
    if max(rss_mb) > args.rss_bound_mb:
        failures.append(f"RSS {max(rss_mb):.1f} MB over the bound")
    if slowest > 2.0:
        failures.append(f"a GET /jobs took {slowest:.1f} s")
    for f in failures[:20]:
        print("FAIL:", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
