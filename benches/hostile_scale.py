#!/usr/bin/env python3
"""Time `gitops-lint` on hostile repositories at growing sizes, to see how the time grows.

    python3 benches/hostile_scale.py [--bin target/release/gitops-lint] [--scale 1 10]
                                     [--case dup_keys ...] [--timeout 120]

Each case is generated in a temporary folder at its base size times each scale, and the binary
runs once per size and format, under `timeout` and an 8 GB address-space limit (`prlimit`),
with its output counted as it comes and thrown away, and its peak RSS taken from `wait4`. A time that grows ten times for ten times the input is
linear; a hundred times is quadratic. Cases (base sizes are those of issue #32):

- dup_keys: one file of 100,000 repeated keys (`a: 1`), text and JSON;
- no_sync_policy: 2000 Applications without `syncPolicy` in one file;
- ci_writeback: one GitLab job of 4000 `git commit && git push` lines (as list items, and as
  one `script: |` block);
- graph: 2000 Applications in one folder, each with that folder as its source (each manages
  every other), with a `kube-system` Namespace and an `argocd-server` Deployment beside them,
  `graph` as text and JSON, and `check`;
- own_folder: 2000 Applications, each in its own folder and managing that folder;
- chain: 2000 Applications, each managing the next one's folder (the last the first's): one
  app-of-apps cycle 2000 deep.

`graph` has as many edges as the repository has (Application, managed object) pairs: in the
`graph` case, every Application manages every other, so ten times the Applications is a
hundred times the edges. The model shares the folder's file list and managed set, and the text
and JSON give each once (JSON `file_sets` and `manage_sets`), so the output grows with the
Applications; DOT draws every edge.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

APP = """apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: {name}
  namespace: argocd
spec:
  project: shop
  source:
    repoURL: https://git.example.com/platform/gitops.git
    path: {path}
  destination:
    server: https://kubernetes.default.svc
    namespace: {name}
"""

# Makes `argocd/self-managed` and `argocd/infra-boundary` judge the shared folder.
INFRA = """apiVersion: v1
kind: Namespace
metadata:
  name: kube-system
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: argocd-server
  namespace: argocd
"""

CONFIG = "repo_urls: [https://git.example.com/platform/gitops.git]\n"


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def dup_keys(d, n):
    write(os.path.join(d, "dup.yaml"), "a: 1\n" * int(100_000 * n))


def no_sync_policy(d, n):
    apps = (APP.format(name=f"app-{i}", path="apps") for i in range(int(2000 * n)))
    write(os.path.join(d, "apps.yaml"), "---\n".join(apps))


def ci_writeback(d, n):
    lines = int(4000 * n)
    items = "".join("    - git commit -am 'bump' && git push\n" for _ in range(lines))
    block = "".join("      git commit -am 'bump' && git push\n" for _ in range(lines))
    write(
        os.path.join(d, ".gitlab-ci.yml"),
        f"items:\n  script:\n{items}\nblock:\n  script:\n    - |\n{block}",
    )


def graph(d, n):
    write(os.path.join(d, ".gitops-lint.yaml"), CONFIG)
    for i in range(int(2000 * n)):
        write(os.path.join(d, "apps", f"app-{i}.yaml"), APP.format(name=f"app-{i}", path="apps"))
    write(os.path.join(d, "apps", "infra.yaml"), INFRA)


def own_folder(d, n):
    write(os.path.join(d, ".gitops-lint.yaml"), CONFIG)
    for i in range(int(2000 * n)):
        write(
            os.path.join(d, "apps", f"app-{i}", "app.yaml"),
            APP.format(name=f"app-{i}", path=f"apps/app-{i}"),
        )


def chain(d, n):
    write(os.path.join(d, ".gitops-lint.yaml"), CONFIG)
    count = int(2000 * n)
    for i in range(count):
        write(
            os.path.join(d, "apps", f"app-{i}", "app.yaml"),
            APP.format(name=f"app-{i}", path=f"apps/app-{(i + 1) % count}"),
        )


CASES = {
    "dup_keys": (dup_keys, [["check", "--format", "text"], ["check", "--format", "json"]]),
    "no_sync_policy": (no_sync_policy, [["check", "--format", "concise"]]),
    "ci_writeback": (ci_writeback, [["check", "--format", "concise"]]),
    "graph": (graph, [["graph"], ["graph", "--format", "json"], ["check", "--format", "concise"]]),
    "own_folder": (own_folder, [["graph"], ["check", "--format", "concise"]]),
    "chain": (chain, [["graph"], ["check", "--format", "concise"]]),
}


def run(binary, args, repo, timeout):
    cmd = ["timeout", str(timeout), "prlimit", "--as=8000000000", binary, *args, repo]
    start = time.perf_counter()
    try:
        p = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "NO_COLOR": "1"},
        )
    except OSError as e:
        sys.exit(f"cannot run {binary}: {e}")
    size = 0
    while chunk := p.stdout.read(1 << 20):
        size += len(chunk)
    # `wait4` gives the child's peak RSS, its own children's included (Linux: kilobytes).
    _, wait_status, usage = os.wait4(p.pid, 0)
    elapsed = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(wait_status)
    status = "timeout" if code == 124 else f"exit {code}"
    return elapsed, size, usage.ru_maxrss / 1024, status


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "gitops-lint"))
    ap.add_argument("--scale", type=float, nargs="+", default=[1, 10])
    ap.add_argument("--case", nargs="+", choices=sorted(CASES), default=sorted(CASES))
    ap.add_argument("--timeout", type=int, default=120)
    args = ap.parse_args()
    print(
        f"{'case':<16}{'command':<24}{'scale':>6}{'seconds':>10}{'RSS MiB':>9}"
        f"{'output MB':>11}  status"
    )
    for name in args.case:
        generate, commands = CASES[name]
        for scale in args.scale:
            repo = tempfile.mkdtemp(prefix=f"hostile-{name}-{scale}-")
            try:
                generate(repo, scale)
                for command in commands:
                    secs, size, rss, status = run(args.bin, command, repo, args.timeout)
                    print(
                        f"{name:<16}{' '.join(command):<24}{scale:>6g}{secs:>10.2f}{rss:>9.0f}"
                        f"{size / 1e6:>11.2f}  {status}",
                        flush=True,
                    )
            finally:
                shutil.rmtree(repo, ignore_errors=True)


if __name__ == "__main__":
    main()
