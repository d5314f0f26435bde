#!/usr/bin/env python3
"""Compares `gitops-lint check` with a generated repository's ground truth.

    python3 benches/truth.py REPO [--binary target/release/gitops-lint] [--json FILE]

REPO is an output of benches/gen_repo.py (it holds `.expected.json`). The script runs
`check REPO --format json --fail-on never` (or reads FILE, a saved run), keeps the findings of the
rules the generator plants, and compares them with the ground truth by (rule, file, line). It
prints every missing and every extra finding and exits 1 when a planted finding is missing.
Extras are printed for judgement, not failed on: the generator's truth is the planted violations,
and a linter may rightly report more (for example a platform child beyond the infra boundary).
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("repo")
    ap.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "gitops-lint"))
    ap.add_argument("--json", help="a saved `check --format json` output of REPO")
    a = ap.parse_args()
    with open(os.path.join(a.repo, ".expected.json"), encoding="utf-8") as f:
        truth = json.load(f)
    if a.json:
        with open(a.json, encoding="utf-8") as f:
            report = json.load(f)
    else:
        out = subprocess.run([a.binary, "check", a.repo, "--format", "json", "--fail-on", "never"],
                             check=True, capture_output=True, text=True).stdout
        report = json.loads(out)
    rules = {t["rule"] for t in truth}
    # CI findings are named `file#job` in the truth; the line tells them apart already.
    expected = {(t["rule"], t["file"].split("#")[0], t["line"]) for t in truth}
    found = {(d["rule"], d["file"], d["range"]["start"]["line"])
             for d in report["diagnostics"] if d["rule"] in rules}
    missing, extra = sorted(expected - found), sorted(found - expected)
    for rule, file, line in missing:
        print(f"missing  {rule}  {file}:{line}")
    for rule, file, line in extra:
        print(f"extra    {rule}  {file}:{line}")
    print(f"{len(expected)} planted, {len(expected & found)} found, "
          f"{len(missing)} missing, {len(extra)} extra")
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()
