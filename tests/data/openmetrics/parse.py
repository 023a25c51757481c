"""Reads an OpenMetrics text file with prometheus_client's own OpenMetrics parser (the one
Prometheus' Python client ships; strict: it refuses a missing `# EOF`, bad escapes, unordered
timestamps, interleaved series) and prints what it read as JSON on stdout:
[{"name", "type", "unit", "samples": [{"name", "labels", "value", "timestamp"}]}].
A file the parser refuses ends the script with the parser's message on stderr, exit 1."""

import json
import sys

from prometheus_client.openmetrics.parser import text_string_to_metric_families


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        text = f.read()
    families = []
    try:
        for family in text_string_to_metric_families(text):
            samples = []
            for s in family.samples:
                ts = s.timestamp
                samples.append({
                    "name": s.name,
                    "labels": s.labels,
                    "value": s.value,
                    "timestamp": None if ts is None else ts.sec,
                })
            families.append({"name": family.name, "type": family.type,
                             "unit": family.unit, "samples": samples})
    except ValueError as err:
        print(f"prometheus_client refused the file: {err}", file=sys.stderr)
        sys.exit(1)
    json.dump(families, sys.stdout)


main()
