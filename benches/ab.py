#!/usr/bin/env python3
"""Alternates runs of several builds of `gitops-lint check` (or the parse floor) on one repository.

usage: python3 benches/ab.py RUNS REPO NAME=BINARY [NAME=BINARY ...] [-- ARGS...]

A BINARY whose file name is `gitops-floor` runs as the floor (`gitops-floor REPO`); any other
runs `check REPO --format json --fail-on never`, or, with `-- ARGS...`, `ARGS` in REPO (e.g.
`-- diff --base base --format json`; a NAME=BINARY after `--` is an argument, not a build). After one warm-up run each, the builds run in
turn RUNS times; the script prints, per build, the wall time (minimum, first quartile, median)
and the CPU time (user + system, minimum and median) from `wait4`, and the largest peak RSS.
"""
import os
import statistics
import subprocess
import sys
import time


def run(binary, repo, args):
    if os.path.basename(binary) == "gitops-floor":
        cmd = [binary, repo]
    elif args:
        cmd = [binary, *args]
    else:
        cmd = [binary, "check", repo, "--format", "json", "--fail-on", "never"]
    started = time.perf_counter()
    p = subprocess.Popen(
        cmd, cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, _, usage = os.wait4(p.pid, 0)
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    argv, args = sys.argv, []
    if "--" in argv:
        at = argv.index("--")
        argv, args = argv[:at], argv[at + 1 :]
    runs, repo = int(argv[1]), os.path.abspath(argv[2])
    builds = [a.split("=", 1) for a in argv[3:]]
    results = {name: [] for name, _ in builds}
    for _, binary in builds:
        run(binary, repo, args)
    for _ in range(runs):
        for name, binary in builds:
            results[name].append(run(binary, repo, args))
    for name, _ in builds:
        wall = sorted(r[0] * 1000 for r in results[name])
        cpu = sorted(r[1] * 1000 for r in results[name])
        rss = max(r[2] for r in results[name])
        print(
            f"{name:>8}: wall min {wall[0]:6.0f} p25 {wall[len(wall) // 4]:6.0f} "
            f"median {statistics.median(wall):6.0f} ms   cpu min {cpu[0]:6.0f} "
            f"median {statistics.median(cpu):6.0f} ms   peak {rss:7.1f} MiB"
        )


if __name__ == "__main__":
    main()
