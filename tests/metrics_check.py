"""Reads a /metrics body on stdin with the official Python client's parsers
and prints what they saw as JSON, for tests/metrics.rs.

    metrics_check.py text         < body   # prometheus_client.parser (classic text format)
    metrics_check.py openmetrics  < body   # prometheus_client.openmetrics.parser

Prints {"families": [{"name", "type", "unit", "help", "samples": [{"name", "labels", "value"}]}]}.
A body either parser refuses raises, and the test sees the traceback.
Run with the pinned virtualenv of tests/requirements.txt (.venv/bin/python).
"""

import json
import sys


def main():
    fmt = sys.argv[1]
    body = sys.stdin.read()
    if fmt == "text":
        from prometheus_client.parser import text_string_to_metric_families
    elif fmt == "openmetrics":
        from prometheus_client.openmetrics.parser import text_string_to_metric_families
    else:
        sys.exit(f"unknown format {fmt}")
    families = []
    for family in text_string_to_metric_families(body):
        families.append({
            "name": family.name,
            "type": family.type,
            "unit": family.unit,
            "help": family.documentation,
            "samples": [
                {"name": s.name, "labels": s.labels, "value": s.value} for s in family.samples
            ],
        })
    json.dump({"families": families}, sys.stdout)


if __name__ == "__main__":
    main()
