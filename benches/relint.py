#!/usr/bin/env python3
"""Latency of `gitops-lint server` re-linting after an edit to one values file.

    python3 benches/relint.py [--apps 1000] [--edits 21] [--exe PATH]
                              [--gen-args=--chart-templates]

Generates a repository with benches/gen_repo.py (or `--generator PATH`; seed 1, cached under
target/relint/; `--gen-args` passes flags to the generator, `--chart-templates` so that every
app's chart has templates the re-lint renders), builds the release binary (unless --exe is given), starts `gitops-lint server`
over stdio with the small LSP client below, opens one Helm values file, waits for the first
diagnostics, then edits the file N times, flipping its `image.tag` to `none` and back. Each
edit is timed from sending `didChange` to receiving the `publishDiagnostics` of that file that
reflects it (an `argocd/image-tag-none` finding appears, or is cleared), and the server's CPU
time per edit is read from /proc (less sensitive to other load than wall time). Runs twice: with
the server's default debounce (50 ms) and with `debounceMs: 0`, which leaves the re-lint alone.
Only the standard library is used.
"""
import argparse
import json
import os
import queue
import re
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RULE = "argocd/image-tag-none"


def find_generator(path=None):
    """The repository generator: benches/gen_repo.py, or another one with the same flags."""
    path = path or os.path.join(ROOT, "benches", "gen_repo.py")
    if not os.path.exists(path):
        sys.exit(f"no generator at {path}")
    return path



def target_dir():
    return os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")


def repository(apps, generator, gen_args=()):
    name = os.path.splitext(os.path.basename(generator))[0]
    folder = f"repo-{apps}" if name == "gen_repo" else f"repo-{name}-{apps}"
    # One folder per set of generator flags: `--chart-templates` gives `-chart-templates`.
    folder += "".join("-" + re.sub(r"[^A-Za-z0-9]+", "-", a).strip("-") for a in gen_args)
    repo = os.path.join(target_dir(), "relint", folder)
    if not os.path.exists(os.path.join(repo, ".expected.json")):
        subprocess.run(
            [sys.executable, generator, "--apps", str(apps), "--out", repo, "--quiet", *gen_args],
            check=True,
        )
    # The server finds the root upward from a file, as the command line does.
    os.makedirs(os.path.join(repo, ".git"), exist_ok=True)
    return repo


def first_tagged_values(repo):
    """A values file whose tag is not already the placeholder, so that each edit flips it."""
    for app in sorted(os.listdir(os.path.join(repo, "apps"))):
        path = os.path.join("apps", app, "values-prod.yaml")
        try:
            with open(os.path.join(repo, path), encoding="utf-8") as f:
                tags = [l for l in f.read().splitlines() if l.startswith("  tag: ")]
        except FileNotFoundError:
            continue
        if tags and "none" not in tags[0].lower():
            return path
    sys.exit(f"no values-prod.yaml with a tag under {repo}/apps")


def uri(path):
    return "file://" + urllib.parse.quote(path)


class Client:
    """JSON-RPC over the server's stdin/stdout, with `Content-Length` framing."""

    def __init__(self, exe, cwd):
        self.proc = subprocess.Popen(
            [exe, "server"], cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        self.incoming = queue.Queue()
        self.next_id = 0
        # The server's log of each run: "checked ROOT (N files: P parsed, U unchanged) in T ms".
        self.runs = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    self.incoming.put(None)
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
            message = json.loads(out.read(length))
            if message.get("method") == "window/logMessage":
                m = re.search(r"(\d+) parsed, (\d+) unchanged\) in (\d+) ms", message["params"]["message"])
                if m:
                    self.runs.append(tuple(int(g) for g in m.groups()))
            self.incoming.put((time.perf_counter(), message))

    def send(self, message):
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            _, m = self.receive(60)
            if m.get("id") == self.next_id and "method" not in m:
                return m.get("result")

    def receive(self, timeout):
        item = self.incoming.get(timeout=timeout)
        if item is None:
            sys.exit("the server closed its output")
        return item

    def wait_diagnostics(self, file_uri, done, timeout=120):
        """The arrival time of the first diagnostics of `file_uri` satisfying `done`."""
        deadline = time.monotonic() + timeout
        while True:
            at, m = self.receive(max(0.0, deadline - time.monotonic()))
            if m.get("method") != "textDocument/publishDiagnostics":
                continue
            if m["params"]["uri"] == file_uri and done(m["params"]["diagnostics"]):
                return at

    def drain(self, quiet):
        """Waits until the server has been silent for `quiet` seconds."""
        while True:
            try:
                self.receive(quiet)
            except queue.Empty:
                return

    def stop(self):
        self.request("shutdown", None)
        self.notify("exit", None)
        self.proc.wait(timeout=30)


def cpu_ms(pid):
    """CPU time (user + system, all threads) the process has used, from /proc; None elsewhere."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def peak_rss_mib(pid):
    """The process's peak resident memory (VmHWM) in MiB, from /proc; None elsewhere."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def has_rule(diagnostics):
    return any(d.get("code") == RULE for d in diagnostics)


def measure(exe, repo, values, edits, debounce_ms, config=None):
    c = Client(exe, repo)
    options = {} if debounce_ms is None else {"debounceMs": debounce_ms}
    if config:
        options["config"] = config
    c.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": uri(repo),
            "capabilities": {},
            "initializationOptions": options,
        },
    )
    c.notify("initialized", {})
    path = os.path.join(repo, values)
    original = open(path, encoding="utf-8").read()
    tag_line = next(line for line in original.splitlines() if line.startswith("  tag: "))
    broken = original.replace(tag_line, "  tag: none", 1)
    file_uri = uri(path)
    started = time.perf_counter()
    c.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": file_uri, "languageId": "yaml", "version": 1, "text": original}},
    )
    # The first run publishes every file with findings; the values file has none.
    while True:
        at, m = c.receive(120)
        if m.get("method") == "textDocument/publishDiagnostics":
            break
    first = at - started
    c.drain(2.0)
    times = []
    cpu = []
    for i in range(edits):
        want = i % 2 == 0
        cpu0 = cpu_ms(c.proc.pid)
        t0 = time.perf_counter()
        c.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": file_uri, "version": i + 2},
                "contentChanges": [{"text": broken if want else original}],
            },
        )
        at = c.wait_diagnostics(file_uri, lambda d: has_rule(d) == want)
        times.append(at - t0)
        c.drain(0.3)
        cpu1 = cpu_ms(c.proc.pid)
        if cpu0 is not None and cpu1 is not None:
            cpu.append(cpu1 - cpu0)
    rss = peak_rss_mib(c.proc.pid)
    c.stop()
    # The runs after the edits (the first run read everything).
    return first, times, c.runs[1:], cpu, rss


def p90(xs):
    s = sorted(xs)
    return s[min(len(s) - 1, round(0.9 * (len(s) - 1)))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--apps", type=int, default=1000)
    ap.add_argument("--generator", help="another generator with gen_repo.py's flags")
    ap.add_argument(
        "--gen-args",
        default="",
        help="flags for the generator, space-separated (e.g. --gen-args=--chart-templates)",
    )
    ap.add_argument("--edits", type=int, default=21)
    ap.add_argument("--exe", help="a gitops-lint binary (default: build the release binary)")
    ap.add_argument("--config", help="a configuration file for the server (e.g. rules turned off)")
    ap.add_argument(
        "--values",
        help="the values file to edit, relative to the repository (default: the first"
        " apps/*/values-prod.yaml with a real tag)",
    )
    ap.add_argument(
        "--debounce",
        choices=["both", "default", "0"],
        default="both",
        help="which runs: the default debounce, debounceMs: 0, or both (default)",
    )
    args = ap.parse_args()

    repo = repository(args.apps, find_generator(args.generator), args.gen_args.split())
    args.values = args.values or first_tagged_values(repo)
    exe = args.exe and os.path.abspath(args.exe)
    if not exe:
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
        exe = os.path.join(target_dir(), "release", "gitops-lint")
    print(
        f"repository: {repo} ({args.apps} apps); binary: {exe}; {args.edits} edits; "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    modes = (("default debounce (50 ms)", None), ("debounceMs: 0", 0))
    modes = [m for m in modes if args.debounce in ("both", "default" if m[1] is None else "0")]
    for label, debounce in modes:
        first, times, runs, cpu, rss = measure(
            exe, repo, args.values, args.edits, debounce, args.config and os.path.abspath(args.config)
        )
        ms = [t * 1000 for t in times]
        print(
            f"{label:>26}: first diagnostics {first * 1000:,.0f} ms; after an edit: "
            f"median {statistics.median(ms):,.0f} ms, p90 {p90(ms):,.0f} ms, "
            f"min {min(ms):,.0f} ms, max {max(ms):,.0f} ms"
        )
        if cpu:
            print(
                f"{'':>26}  server CPU time per edit (all threads): median "
                f"{statistics.median(cpu):,.0f} ms, p90 {p90(cpu):,.0f} ms"
            )
        if rss:
            print(f"{'':>26}  server peak memory: {rss:,.0f} MiB")
        if runs:
            parsed = sorted({r[0] for r in runs})
            engine = [r[2] for r in runs]
            print(
                f"{'':>26}  the runs themselves (server log): median {statistics.median(engine):,.0f} ms, "
                f"p90 {p90(engine):,.0f} ms; files parsed per run: {parsed}"
            )


if __name__ == "__main__":
    main()
