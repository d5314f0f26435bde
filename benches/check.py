#!/usr/bin/env python3
"""Benchmark `gitops-lint check` against the pure-parse floor on a generated repository.

    python3 benches/check.py [--apps 1000] [--runs 7] [--generator PATH]

Generates a repository with benches/gen_repo.py (seed 1; `--generator` for another one), builds the release binary,
then alternates runs of `check --parse-only` (walk, read and parse every file, no rules: the
floor) and `check` (everything), and prints wall time (median and min), peak memory, files and
documents per second, and the ratio of check to floor. Nothing is written but the generated
repository under the system temp folder.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def find_generator(path=None):
    """The repository generator: benches/gen_repo.py, or another one with the same flags."""
    path = path or os.path.join(ROOT, "benches", "gen_repo.py")
    if not os.path.exists(path):
        sys.exit(f"no generator at {path}")
    return path


def cache_name(generator, apps):
    """Generated repositories are cached per generator, so that two never share a folder."""
    name = os.path.splitext(os.path.basename(generator))[0]
    return f"gitops-lint-bench-{apps}" if name == "gen_repo" else f"gitops-lint-bench-{name}-{apps}"


def run_once(cmd):
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out, _ = proc.communicate()
    elapsed = time.perf_counter() - start
    return elapsed, out


def peak_rss_kb(cmd):
    """Peak resident memory of one run, from GNU time if present, else from rusage."""
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.execv(cmd[0], cmd)
    _, _, usage = os.wait4(pid, 0)
    return usage.ru_maxrss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--apps", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--jobs", type=int, default=0, help="worker threads (0: one per core)")
    ap.add_argument("--generator", help="another generator with gen_repo.py's flags")
    args = ap.parse_args()

    generator = find_generator(args.generator)
    repo = os.path.join(tempfile.gettempdir(), cache_name(generator, args.apps))
    if not os.path.exists(os.path.join(repo, ".expected.json")):
        subprocess.run([sys.executable, generator, "--apps", str(args.apps), "--out", repo, "--quiet"], check=True)
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    exe = os.path.join(ROOT, "target", "release", "gitops-lint")
    jobs = ["-j", str(args.jobs)] if args.jobs else []
    floor_cmd = [exe, "check", repo, "--parse-only", "--format", "json", "--fail-on", "never"] + jobs
    check_cmd = [exe, "check", repo, "--format", "json", "--fail-on", "never"] + jobs

    # Warm the page cache, then alternate so both see the same machine state.
    run_once(floor_cmd)
    run_once(check_cmd)
    floor, check = [], []
    summary = None
    for _ in range(args.runs):
        floor.append(run_once(floor_cmd)[0])
        t, out = run_once(check_cmd)
        check.append(t)
        summary = json.loads(out)["summary"]
    floor_mem = peak_rss_kb(floor_cmd)
    check_mem = peak_rss_kb(check_cmd)

    files, docs = summary["files"], summary["documents"]
    mf, mc = statistics.median(floor), statistics.median(check)
    print(f"repository: {os.path.basename(generator)} --apps {args.apps} (seed 1): {files} files, {docs} documents")
    print(f"cores: {os.cpu_count()}, runs: {args.runs}, jobs: {args.jobs or 'default'}")
    print()
    print("| mode | median wall | min wall | peak RSS | files/s | documents/s |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, ts, mem in (("floor (walk + read + parse)", floor, floor_mem), ("check (all rules)", check, check_mem)):
        m = statistics.median(ts)
        print(f"| {name} | {m * 1000:.0f} ms | {min(ts) * 1000:.0f} ms | {mem / 1024:.1f} MiB | {files / m:,.0f} | {docs / m:,.0f} |")
    print()
    print(f"check / floor (median): {mc / mf:.2f}x; findings: {summary['errors']} errors, {summary['warnings']} warnings, {summary['infos']} infos")


if __name__ == "__main__":
    main()
