#!/usr/bin/env python3
"""Where `gitops-lint check` spends its CPU, as shares of the run, from a `perf` profile.

    python3 benches/shares.py REPO [REPO ...] [--freq 499]

Builds the release binary with frame pointers and line tables into target/profiling (so `perf`
unwinds through rayon's threads), records `check REPO --format json --fail-on never` with
`perf record -g` (Debian's linux-perf), and prints, per repository, the share of all samples
spent under each step of the run (inclusive: a step that calls the YAML parser counts it). The
steps overlap where one calls another (the kustomize build reads files, rendering parses its
output), so the column does not sum to 100 %. Comparing the columns of two sizes shows whether
a step grows faster than the rest (issue 38's "no step superlinear").
"""
import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (label, symbol prefixes whose inclusive share is the step's; the largest one counts).
STEPS = [
    ("walk", ["gitops_lint::source::walk::discover_at_most"]),
    ("read files", ["gitops_lint::source::read_bytes"]),
    ("parse YAML (load)", ["gitops_lint::engine::read::parse_text"]),
    ("keep what readers read", ["gitops_lint::repo::retention::Retention::retain"]),
    ("kustomize builds", ["gitops_lint::model::kustomize::build::build_with_options"]),
    ("resolve Applications", ["gitops_lint::model::argocd::resolve::resolve"]),
    ("render charts", ["gitops_lint::model::helm::render::render_cached"]),
    ("parse rendered output", ["gitops_lint::model::argocd::rendered::SharedParses::parse"]),
    ("Kubernetes object index", ["gitops_lint::model::k8s::index"]),
    ("document rules", ["gitops_lint::engine::dispatch::DocumentPass::run"]),
    ("Rego (VM)", ["gitops_lint::policy::vm::eval"]),
    ("Rego input (data.gitops)", ["gitops_lint::policy::data::model_value"]),
    ("argocd/schema", ["<gitops_lint::rules::argocd::schema::Schema as gitops_lint::rule::Rule>::check_project"]),
    ("JSON output", ["gitops_lint::report::json::render"]),
    ("allocator", ["_rjem_", "je_", "malloc", "free", "__libc_malloc", "_int_malloc", "_int_free"]),
]


def build():
    env = dict(os.environ)
    env["RUSTFLAGS"] = (env.get("RUSTFLAGS", "") + " -C force-frame-pointers=yes").strip()
    env["CARGO_PROFILE_RELEASE_DEBUG"] = "line-tables-only"
    target = os.path.join(ROOT, "target", "profiling")
    subprocess.run(["cargo", "build", "--release", "--quiet", "--target-dir", target],
                   cwd=ROOT, env=env, check=True)
    return os.path.join(target, "release", "gitops-lint")


def shares(exe, repo, freq):
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "perf.data")
        subprocess.run(["perf", "record", "-q", "-g", "-F", str(freq), "-o", data, exe, "check",
                        repo, "--format", "json", "--fail-on", "never"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        out = subprocess.run(["perf", "report", "-i", data, "--children", "--sort", "symbol",
                              "--stdio", "-g", "none", "--percent-limit", "0.05"],
                             capture_output=True, text=True, check=True).stdout
    inclusive, self_time = {}, {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 4 or not parts[0].endswith("%") or parts[2] not in ("[.]", "[k]"):
            continue
        symbol = " ".join(parts[3:]).rstrip(" -").strip()
        inclusive.setdefault(symbol, float(parts[0][:-1]))
        self_time.setdefault(symbol, float(parts[1][:-1]))
    row = {}
    for label, prefixes in STEPS:
        if label == "allocator":
            # Self time of the allocator's functions, wherever they are called from.
            row[label] = sum(v for s, v in self_time.items()
                             if any(s.startswith(p) for p in prefixes))
        else:
            row[label] = max((v for s, v in inclusive.items()
                              if any(s.startswith(p) for p in prefixes)), default=0.0)
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("repos", nargs="+")
    ap.add_argument("--freq", type=int, default=499)
    a = ap.parse_args()
    exe = build()
    rows = [shares(exe, os.path.abspath(r), a.freq) for r in a.repos]
    names = [os.path.basename(os.path.normpath(r)) for r in a.repos]
    width = max(len(label) for label, _ in STEPS)
    print(f"{'step':<{width}} " + " ".join(f"{n:>14}" for n in names))
    for label, _ in STEPS:
        print(f"{label:<{width}} " + " ".join(f"{row[label]:>13.1f}%" for row in rows))


if __name__ == "__main__":
    sys.exit(main())
