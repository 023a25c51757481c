#!/usr/bin/env python3
# Test helper for rtbuild: reads one JUnit file with the readers CI dashboards use and prints, as
# JSON, what each of them saw. The test asserts on it; nothing is judged here.
#   - junitparser (PyPI): every case's name, time, system-out; every suite's properties and time;
#     and the suite times `junitparser merge` (its command line) computes from the cases.
#   - junit2html (PyPI): renders the file to HTML (the text is returned).
#   - EnricoMi/publish-unit-test-result-action's own parser (`publish.junit`, from a checkout of
#     the action whose `python/` folder is PUBLISH_DIR): the cases as the action records them.
#
# usage: readers.py JUNIT.xml WORK_DIR [PUBLISH_DIR]
import json
import os
import subprocess
import sys

junit, work = sys.argv[1], sys.argv[2]
publish_dir = sys.argv[3] if len(sys.argv) > 3 else None
bin_dir = os.path.dirname(sys.executable)
out = {}

import junitparser  # noqa: E402

xml = junitparser.JUnitXml.fromfile(junit)
suites = []
for suite in xml:
    suites.append(
        {
            "name": suite.name,
            "time": suite.time,
            "properties": {p.name: p.value for p in suite.properties()},
            "cases": [
                {"name": case.name, "classname": case.classname, "time": case.time,
                 "system_out": case.system_out}
                for case in suite
            ],
        }
    )
out["junitparser"] = suites

merged = os.path.join(work, "merged.xml")
subprocess.run([os.path.join(bin_dir, "junitparser"), "merge", junit, merged], check=True)
out["merged_suite_times"] = {s.name: s.time for s in junitparser.JUnitXml.fromfile(merged)}

html = os.path.join(work, "junit.html")
subprocess.run([os.path.join(bin_dir, "junit2html"), junit, html], check=True)
with open(html, encoding="utf-8") as f:
    out["junit2html"] = f.read()

if publish_dir is None:
    json.dump(out, sys.stdout)
    sys.exit(0)
sys.path.insert(0, publish_dir)
from publish.junit import parse_junit_xml_files, process_junit_xml_elems  # noqa: E402

parsed = process_junit_xml_elems(parse_junit_xml_files([junit], False, False))
out["publish"] = {
    "errors": [str(e.message) for e in parsed.errors],
    "suite_time": parsed.suite_time,
    "cases": [
        {"class_name": c.class_name, "test_name": c.test_name, "result": c.result,
         "time": c.time, "stdout": c.stdout}
        for c in parsed.cases
    ],
}
json.dump(out, sys.stdout)
