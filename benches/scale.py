#!/usr/bin/env python3
"""`gitops-lint check` against the parse floor, on generated repositories of growing size.

    python3 benches/scale.py [--apps 1000,5000] [--runs 5] [--gen-args=--chart-templates]
                             [--check-args "--format json --fail-on never"]

Run from anywhere in a clone. Builds the floor (benches/floor, into target/floor) and the
release binary, generates target/scale/apps-N[-flags] once per size with benches/gen_repo.py
(seed 1), warms the page cache with one run of each, then alternates floor and check runs so
that a change in the machine's load hits both. Prints per size the median and min wall time of
each, the median of the per-pair ratios check/floor and the peak RSS of each (the largest of
its runs, from the child's rusage). The last line, "worst ratio R, worst check RSS M MiB", is
for scripts.
"""
import argparse
import os
import shlex
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.path.join(ROOT, "target")


def build():
    subprocess.run(["cargo", "build", "--release", "--quiet", "--manifest-path",
                    os.path.join(ROOT, "benches", "floor", "Cargo.toml"),
                    "--target-dir", os.path.join(TARGET, "floor")], check=True)
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    return (os.path.join(TARGET, "floor", "release", "gitops-lint-floor"),
            os.path.join(TARGET, "release", "gitops-lint"))


def generated(apps, gen_args):
    """The repository for `apps` and these generator flags, generated on first use."""
    flags = shlex.split(gen_args)
    suffix = "".join("-" + f.lstrip("-").replace("=", "-") for f in flags)
    out = os.path.join(TARGET, "scale", f"apps-{apps}{suffix}")
    done = os.path.join(out, ".generated")
    if not os.path.exists(done):
        subprocess.run([sys.executable, os.path.join(ROOT, "benches", "gen_repo.py"),
                        "--apps", str(apps), "--out", out, "--quiet", *flags], check=True)
        # A Git repository, as users' are: the walk reads .gitignore files the same way.
        subprocess.run(["git", "init", "-q", out], check=True)
        open(done, "w").close()
    return out


def timed(cmd):
    """(wall seconds, peak RSS MiB) of one run of cmd, its output discarded."""
    start = time.perf_counter()
    child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):  # 1 is `check` with findings
        sys.exit(f"{' '.join(cmd)} exited with {code}")
    return wall, usage.ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--apps", default="1000,5000", help="comma-separated sizes")
    ap.add_argument("--runs", type=int, default=5, help="alternated pairs per size")
    ap.add_argument("--check-args", default="--format json --fail-on never")
    ap.add_argument("--gen-args", default="", help="extra gen_repo.py flags, e.g. --chart-templates")
    a = ap.parse_args()
    floor, binary = build()
    load = os.getloadavg()
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores")
    print(f"{'apps':>7} {'floor med':>9} {'min':>6} {'check med':>9} {'min':>6} {'ratio':>6}"
          f" {'floor MiB':>9} {'check MiB':>9}")
    worst_ratio = worst_rss = 0.0
    for apps in (int(n) for n in a.apps.split(",")):
        repo = generated(apps, a.gen_args)
        check = [binary, "check", repo, *shlex.split(a.check_args)]
        timed([floor, repo])
        timed(check)
        pairs = [(timed([floor, repo]), timed(check)) for _ in range(a.runs)]
        floor_walls = [f[0] for f, _ in pairs]
        check_walls = [c[0] for _, c in pairs]
        ratio = statistics.median(c[0] / f[0] for f, c in pairs)
        floor_rss = max(f[1] for f, _ in pairs)
        check_rss = max(c[1] for _, c in pairs)
        worst_ratio, worst_rss = max(worst_ratio, ratio), max(worst_rss, check_rss)
        print(f"{apps:>7} {statistics.median(floor_walls):>9.3f} {min(floor_walls):>6.3f}"
              f" {statistics.median(check_walls):>9.3f} {min(check_walls):>6.3f} {ratio:>6.2f}"
              f" {floor_rss:>9.1f} {check_rss:>9.1f}", flush=True)
    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"worst ratio {worst_ratio:.2f}, worst check RSS {worst_rss:.0f} MiB")


if __name__ == "__main__":
    main()
