#!/usr/bin/env python3
"""Parses a Prometheus text exposition with prometheus_client's parser (Debian
python3-prometheus-client) and checks that every given metric family name has a sample.

    usage: check_prometheus_text.py FILE NAME...
Exit 0: parsed, all names present; 1: a parse error or a missing name; 77: no parser installed.
"""
import sys

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    print("skipped: prometheus_client is not installed (apt-get install python3-prometheus-client)")
    sys.exit(77)

text = open(sys.argv[1], encoding="utf-8").read()
seen = set()
try:
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            seen.add(sample.name)
            seen.add(family.name)
except Exception as e:  # the parser raises ValueError and others on malformed text
    print(f"parse error: {e}")
    sys.exit(1)
missing = [n for n in sys.argv[2:] if n not in seen]
if missing:
    print("missing: " + " ".join(missing))
    sys.exit(1)
print(f"parsed {len(seen)} names; all {len(sys.argv) - 2} golden names present")
