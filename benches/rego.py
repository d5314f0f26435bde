#!/usr/bin/env python3
"""What the shipped Rego pack costs, next to the built-in Rust rules, on a generated repository.

    python3 benches/rego.py [--apps 1000] [--runs 7] [--exe PATH]

Uses the release binary (`$CARGO_TARGET_DIR/release/gitops-lint`, else `target/release/…`; build
it first) and the repository of `benches/check.py` (generated with benches/gen_repo.py,
seed 1, or `--generator PATH`). Alternates four modes, with configurations written to a temporary folder:

- floor: `--parse-only` (walk, read, parse);
- rust: every rule except the shipped Rego pack;
- rego: only the shipped Rego pack (every Rust rule off);
- all: everything (the default).

Prints median and min wall time per mode, and the pack's evaluation throughput: documents of the
repository per second of (rego − floor). A policy user's cost would add to it the same way.
"""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check import cache_name, find_generator, peak_rss_kb, run_once  # noqa: E402


def pack_ids():
    ids = []
    for p in sorted(glob.glob(os.path.join(ROOT, "rules", "**", "*.rego"), recursive=True)):
        if p.endswith("_test.rego"):
            continue
        m = re.search(r'"id":\s*"([^"]+)"', open(p, encoding="utf-8").read())
        if m:
            ids.append(m.group(1))
    return ids


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--apps", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--exe")
    ap.add_argument("--repo", help="an existing generated repository (default: generate one)")
    ap.add_argument("--generator", help="another generator with gen_repo.py's flags")
    args = ap.parse_args()

    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    exe = args.exe or os.path.join(target, "release", "gitops-lint")
    if not os.path.exists(exe):
        sys.exit(f"build the release binary first (cargo build --release): {exe}")
    generator = find_generator(args.generator)
    repo = args.repo or os.path.join(tempfile.gettempdir(), cache_name(generator, args.apps))
    if not args.repo and not os.path.exists(os.path.join(repo, ".expected.json")):
        subprocess.run([sys.executable, generator, "--apps", str(args.apps), "--out", repo, "--quiet"], check=True)

    rules = json.loads(subprocess.run([exe, "rules", "--format", "json"], capture_output=True, check=True).stdout)
    rego = set(pack_ids())
    builtin = [r["id"] for r in rules if r["id"] not in rego and not r["id"].startswith(("yaml/", "io/", "lint/", "policy/"))]
    tmp = tempfile.mkdtemp(prefix="gitops-lint-rego-bench-")
    configs = {}
    for name, off in (("rust", sorted(rego)), ("rego", builtin)):
        path = os.path.join(tmp, f"{name}.yaml")
        with open(path, "w", encoding="utf-8") as f:
            f.write("rules:\n" + "".join(f"  {i}: off\n" for i in off))
        configs[name] = path
    base = [exe, "check", repo, "--format", "json", "--fail-on", "never"]
    # The repository's own config (if any) is replaced by ours; `all` uses an empty one.
    empty = os.path.join(tmp, "all.yaml")
    open(empty, "w").close()
    modes = {
        "floor (walk + read + parse)": base + ["--parse-only", "--config", empty],
        "rust (built-in rules, no Rego)": base + ["--config", configs["rust"]],
        "rego (shipped pack only)": base + ["--config", configs["rego"]],
        "all (Rust rules + Rego pack)": base + ["--config", empty],
    }
    for cmd in modes.values():
        run_once(cmd)
    times = {k: [] for k in modes}
    summaries = {}
    for _ in range(args.runs):
        for k, cmd in modes.items():
            t, out = run_once(cmd)
            times[k].append(t)
            summaries[k] = json.loads(out)
    mem = {k: peak_rss_kb(cmd) for k, cmd in modes.items()}
    s = summaries["all (Rust rules + Rego pack)"]["summary"]
    files, docs = s["files"], s["documents"]
    by_rule = {}
    for d in summaries["all (Rust rules + Rego pack)"]["diagnostics"]:
        by_rule[d["rule"]] = by_rule.get(d["rule"], 0) + 1
    print(f"repository: {os.path.basename(generator)} --apps {args.apps} (seed 1): {files} files, {docs} documents")
    print(f"cores: {os.cpu_count()}, runs: {args.runs}; shipped Rego rules: {', '.join(sorted(rego))}")
    print()
    print("| mode | median wall | min wall | peak RSS |")
    print("|---|---:|---:|---:|")
    med = {}
    for k, ts in times.items():
        med[k] = statistics.median(ts)
        print(f"| {k} | {med[k] * 1000:.0f} ms | {min(ts) * 1000:.0f} ms | {mem[k] / 1024:.1f} MiB |")
    floor = med["floor (walk + read + parse)"]
    rust = med["rust (built-in rules, no Rego)"] - floor
    pack = med["rego (shipped pack only)"] - floor
    print()
    print(f"built-in Rust rules cost (rust − floor): {rust * 1000:.0f} ms")
    print(f"shipped Rego pack cost (rego − floor): {pack * 1000:.0f} ms"
          + (f" → {docs / pack:,.0f} documents/s" if pack > 0 else ""))
    print(f"findings (all): {json.dumps(dict(sorted(by_rule.items())))}")


if __name__ == "__main__":
    main()
