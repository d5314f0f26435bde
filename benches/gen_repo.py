#!/usr/bin/env python3
"""Generates a synthetic GitOps repository for gitops-lint's benchmarks and recall tests.

    python3 benches/gen_repo.py --apps N --out DIR [--seed S] [--violation-rate R]
                                [--chart-templates] [--overlays] [--quiet]

Python 3 standard library only, and deterministic: the same arguments give the same bytes.
Each of N apps has a Helm chart under apps/<app>/ (values.yaml, values-dev.yaml,
values-prod.yaml) and a dev and a prod Argo CD Application under argocd/<app>/ (Helm sources;
every 7th prod Application is multi-source with a `$values` ref). Teams get AppProjects with
destination bounds; a platform folder holds an app-of-apps root, add-on Applications from
external charts, an ApplicationSet and Argo CD's own settings; about a third of the apps have
kustomize bases with manifests and a large Grafana dashboard ConfigMap (most of the bytes, as
in real repositories); `.gitlab-ci.yml` has write-back jobs.

--chart-templates gives every chart templates/ that the linter renders. --overlays adds
kustomize overlays per environment over the shared bases (configMapGenerator, replacements)
and a kustomize-source Application for each.

Violations of the built-in rules are planted at candidate sites, each independently with
probability R (a hash of seed, rule and site decides, so a higher R plants a superset and the
rest of the repository does not change); with R > 0 every rule is planted at least once.
`.expected.json` lists them: [{rule, file, line, note}], file repo-relative, line 1-based.
"""
import argparse
import hashlib
import json
import os
import random
import shutil
import sys

RULES = [
    "argocd/image-tag-none",
    "argocd/sync-policy",
    "argocd/destination-out-of-project",
    "argocd/self-managed",
    "argocd/infra-boundary",
    "argocd/insecure-without-edge-tls",
    "ci/writeback-skip-ci",
]
REPO_URL = "https://gitlab.example.com/platform/gitops.git"
DOMAINS = ["billing", "search", "orders", "users", "catalog", "payments", "auth", "media",
           "notify", "reports", "ledger", "inventory", "shipping", "pricing", "reviews"]
COMPONENTS = ["api", "worker", "web", "cron", "gateway", "sync", "indexer", "exporter"]
ADDONS = [  # name, chart repository, chart, namespace: no infrastructure namespace or chart, so the
    # only infra-boundary findings are the planted ones
    ("monitoring", "https://prometheus-community.github.io/helm-charts", "prometheus", "monitoring"),
    ("logging", "https://grafana.github.io/helm-charts", "loki", "logging"),
    ("tracing", "https://grafana.github.io/helm-charts", "tempo", "tracing"),
    ("external-dns", "https://kubernetes-sigs.github.io/external-dns", "external-dns", "external-dns"),
    ("oauth2-proxy", "https://oauth2-proxy.github.io/manifests", "oauth2-proxy", "auth-proxy"),
    ("velero", "https://vmware-tanzu.github.io/helm-charts", "velero", "velero"),
    ("goldilocks", "https://charts.fairwinds.com/stable", "goldilocks", "goldilocks"),
    ("polaris", "https://charts.fairwinds.com/stable", "polaris", "polaris"),
    ("reloader", "https://stakater.github.io/stakater-charts", "reloader", "reloader"),
    ("dashboards", "https://grafana.github.io/helm-charts", "grafana", "grafana"),
]
INFRA_NAMESPACES = ["kube-system", "cert-manager", "rook-ceph", "cilium"]


class Doc:
    """A YAML file built line by line; `mark` remembers the 1-based line of the next line."""

    def __init__(self):
        self.lines = []

    def add(self, *lines):
        self.lines.extend(lines)

    def line_of_next(self):
        return len(self.lines) + 1

    def text(self):
        return "\n".join(self.lines) + "\n"


class Planter:
    """Decides which candidate sites are violated and collects the ground truth."""

    def __init__(self, seed, rate):
        self.seed, self.rate = seed, rate
        self.truth = []
        self.lowest = {}  # rule -> (draw, site): forced when nothing else of the rule is planted

    def draw(self, rule, site):
        digest = hashlib.sha256(f"{self.seed}\0{rule}\0{site}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64

    def plants(self, rule, site):
        return self.rate > 0 and self.draw(rule, site) < self.rate

    def consider(self, rule, site):
        """Remembers each rule's lowest-draw site, for the at-least-once guarantee."""
        d = self.draw(rule, site)
        if rule not in self.lowest or d < self.lowest[rule][0]:
            self.lowest[rule] = (d, site)

    def record(self, rule, path, line, note):
        self.truth.append({"rule": rule, "file": path, "line": line, "note": note})


class Repo:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(f"{args.seed}:content")
        self.planter = Planter(args.seed, args.violation_rate)
        self.files = {}
        n = args.apps
        self.teams = [f"team-{chr(ord('a') + i)}" for i in range(max(3, min(12, n // 80)))]
        self.apps = []
        for i in range(n):
            team = self.teams[i % len(self.teams)]
            name = f"{team}-{DOMAINS[(i // len(self.teams)) % len(DOMAINS)]}-{COMPONENTS[i % len(COMPONENTS)]}-{i}"
            self.apps.append((i, team, name))

    def put(self, path, text):
        self.files[path] = text

    # --- planting ---------------------------------------------------------------------------
    def maybe(self, rule, site):
        """Whether this site is violated: its own draw, or it is the lowest-draw site of a rule
        that the first pass left unplanted."""
        self.planter.consider(rule, site)
        return self.planter.plants(rule, site) or self.forced.get(rule) == site

    # --- projects ---------------------------------------------------------------------------
    def projects(self):
        for team in self.teams:
            d = Doc()
            d.add("apiVersion: argoproj.io/v1alpha1", "kind: AppProject", "metadata:",
                  f"  name: {team}", "  namespace: argocd", "spec:",
                  f"  description: Workloads of {team}", "  sourceRepos:", f"    - {REPO_URL}",
                  "  destinations:")
            for server in ("https://kubernetes.default.svc",):
                d.add(f"    - server: {server}", f"      namespace: '{team}-*'")
            for name in ("prod-eu-1", "prod-us-1"):
                d.add(f"    - name: {name}", f"      namespace: '{team}-*'")
            d.add("  clusterResourceWhitelist:", "    - group: ''", "      kind: Namespace")
            self.put(f"projects/{team}.yaml", d.text())
        d = Doc()
        d.add("apiVersion: argoproj.io/v1alpha1", "kind: AppProject", "metadata:",
              "  name: platform", "  namespace: argocd", "spec:", "  sourceRepos:", "    - '*'",
              "  destinations:", "    - server: https://kubernetes.default.svc", "      namespace: '*'",
              "  clusterResourceWhitelist:", "    - group: '*'", "      kind: '*'")
        self.put("projects/platform.yaml", d.text())

    # --- Helm values and charts -------------------------------------------------------------
    def tag_value(self, i, env):
        r = random.Random(f"{self.args.seed}:tag:{i}:{env}")
        if r.random() < 0.5:
            return "".join(r.choice("0123456789abcdef") for _ in range(40))
        return f"{r.randint(0, 4)}.{r.randint(0, 30)}.{r.randint(0, 20)}"

    def values_file(self, i, team, app, env, path):
        r = random.Random(f"{self.args.seed}:values:{i}:{env}")
        d = Doc()
        d.add(f"# {app} ({env})", "image:", f"  repository: registry.example.com/{team}/{app}")
        tag_line = d.line_of_next()
        if self.maybe("argocd/image-tag-none", path):
            spelling = ["none", '"none"', "NONE"][r.randrange(3)]
            d.add(f"  tag: {spelling}")
            self.planter.record("argocd/image-tag-none", path, tag_line, f"tag: {spelling}")
        else:
            d.add(f"  tag: \"{self.tag_value(i, env)}\"")
        d.add("  pullPolicy: IfNotPresent", f"replicaCount: {1 if env == 'dev' else r.randint(2, 6)}")
        if r.random() < 0.3:
            d.add("defaults: &resources", "  requests:", f"    cpu: {r.choice([50, 100, 250])}m",
                  f"    memory: {r.choice([64, 128, 256])}Mi", "resources: *resources")
        else:
            d.add("resources:", "  requests:", f"    cpu: {r.choice([50, 100, 250])}m",
                  f"    memory: {r.choice([64, 128, 256])}Mi", "  limits:",
                  f"    memory: {r.choice([256, 512, 1024])}Mi")
        d.add("service:", "  type: ClusterIP", f"  port: {r.choice([80, 8080, 9000])}",
              "ingress:", f"  enabled: {'true' if env == 'prod' else 'false'}",
              "  className: nginx", "  hosts:", f"    - host: {app}.{env}.example.com",
              "      paths:", "        - path: /", "          pathType: Prefix",
              "livenessProbe:", "  httpGet:", "    path: /healthz", "    port: http",
              f"  initialDelaySeconds: {r.randint(5, 30)}", "readinessProbe:", "  httpGet:",
              "    path: /ready", "    port: http", "env:")
        for k in range(r.randint(3, 15)):
            d.add(f"  - name: {app.upper().replace('-', '_')}_SETTING_{k}",
                  f"    value: \"{r.randint(0, 10**6)}\"")
        d.add("metricsExporter:", f"  enabled: {'true' if r.random() < 0.5 else 'false'}",
              "  image:", "    repository: registry.example.com/tools/exporter",
              f"    tag: v{r.randint(0, 3)}.{r.randint(0, 9)}.0",
              "podAnnotations:", f"  team: {team}", f"  prometheus.io/scrape: \"true\"",
              "nodeSelector:", f"  kubernetes.io/os: linux", "tolerations: []")
        return d.text()

    def chart(self, i, team, app):
        base = f"apps/{app}"
        self.put(f"{base}/Chart.yaml", "\n".join([
            "apiVersion: v2", f"name: {app}", f"description: {app} of {team}", "type: application",
            f"version: 0.{i % 10}.{i % 7}", "appVersion: \"1.0.0\""]) + "\n")
        self.put(f"{base}/values.yaml", "\n".join([
            "image:", f"  repository: registry.example.com/{team}/{app}", "  tag: \"\"",
            "replicaCount: 1", "service:", "  port: 80", "ingress:", "  enabled: false",
            "  hosts: []", "env: []", "metricsExporter:", "  enabled: false"]) + "\n")
        for env in ("dev", "prod"):
            path = f"{base}/values-{env}.yaml"
            self.put(path, self.values_file(i, team, app, env, path))
        if i % 10 == 3:  # a decoy no Application references: an empty tag is not a placeholder
            self.put(f"{base}/values-local.yaml", "image:\n  tag: \"\"\nreplicaCount: 1\n")
        if self.args.chart_templates:
            self.templates(base)

    def templates(self, base):
        self.put(f"{base}/templates/_helpers.tpl", "\n".join([
            '{{- define "app.fullname" -}}',
            '{{- printf "%s" .Release.Name | trunc 63 | trimSuffix "-" -}}',
            "{{- end -}}",
            '{{- define "app.labels" -}}',
            "app.kubernetes.io/name: {{ .Chart.Name }}",
            "app.kubernetes.io/instance: {{ .Release.Name }}",
            "{{- end -}}"]) + "\n")
        self.put(f"{base}/templates/deployment.yaml", "\n".join([
            "apiVersion: apps/v1", "kind: Deployment", "metadata:",
            '  name: {{ include "app.fullname" . }}', "  labels:",
            '    {{- include "app.labels" . | nindent 4 }}', "spec:",
            "  replicas: {{ .Values.replicaCount }}", "  selector:", "    matchLabels:",
            '      {{- include "app.labels" . | nindent 6 }}', "  template:", "    metadata:",
            "      labels:", '        {{- include "app.labels" . | nindent 8 }}', "    spec:",
            "      containers:", "        - name: {{ .Chart.Name }}",
            '          image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"',
            "          ports:", "            - name: http",
            "              containerPort: {{ .Values.service.port }}",
            "          {{- with .Values.env }}", "          env:",
            "            {{- toYaml . | nindent 12 }}", "          {{- end }}",
            "          {{- with .Values.resources }}", "          resources:",
            "            {{- toYaml . | nindent 12 }}", "          {{- end }}",
            "        {{- if .Values.metricsExporter.enabled }}", "        - name: exporter",
            '          image: "{{ .Values.metricsExporter.image.repository }}:{{ .Values.metricsExporter.image.tag }}"',
            "        {{- end }}"]) + "\n")
        self.put(f"{base}/templates/service.yaml", "\n".join([
            "apiVersion: v1", "kind: Service", "metadata:", '  name: {{ include "app.fullname" . }}',
            "spec:", "  type: {{ .Values.service.type | default \"ClusterIP\" }}", "  ports:",
            "    - port: {{ .Values.service.port }}", "      targetPort: http", "  selector:",
            '    {{- include "app.labels" . | nindent 4 }}']) + "\n")
        self.put(f"{base}/templates/ingress.yaml", "\n".join([
            "{{- if .Values.ingress.enabled }}", "apiVersion: networking.k8s.io/v1", "kind: Ingress",
            "metadata:", '  name: {{ include "app.fullname" . }}', "spec:",
            "  ingressClassName: {{ .Values.ingress.className }}", "  rules:",
            "    {{- range .Values.ingress.hosts }}", "    - host: {{ .host }}", "      http:",
            "        paths:", "          - path: /", "            pathType: Prefix",
            "            backend:", "              service:",
            '                name: {{ include "app.fullname" $ }}', "                port:",
            "                  name: http", "    {{- end }}", "{{- end }}"]) + "\n")

    # --- Applications -----------------------------------------------------------------------
    def sync_policy(self, d, path, site_note):
        """Writes spec.syncPolicy, or one of its violations, and records the line."""
        rule = "argocd/sync-policy"
        planted = self.maybe(rule, path)
        kind = random.Random(f"{self.args.seed}:sync:{path}").randrange(5) if planted else None
        if kind == 4:  # no automated at all: reported at syncPolicy
            self.planter.record(rule, path, d.line_of_next(), f"{site_note}: no automated")
            d.add("  syncPolicy:", "    syncOptions:", "      - CreateNamespace=true")
            return
        d.add("  syncPolicy:")
        if kind == 3:
            self.planter.record(rule, path, d.line_of_next(), f"{site_note}: automated {{}}")
            d.add("    automated: {}")
        else:
            d.add("    automated:")
            if kind == 0:
                self.planter.record(rule, path, d.line_of_next(), f"{site_note}: prune false")
                d.add("      prune: false", "      selfHeal: true")
            elif kind == 1:
                d.add("      prune: true")
                self.planter.record(rule, path, d.line_of_next(), f"{site_note}: selfHeal false")
                d.add("      selfHeal: false")
            elif kind == 2:  # selfHeal missing: reported at automated
                self.planter.record(rule, path, d.line_of_next() - 1, f"{site_note}: selfHeal missing")
                d.add("      prune: true")
            else:
                d.add("      prune: true", "      selfHeal: true")
        d.add("    syncOptions:", "      - CreateNamespace=true")

    def tenant_application(self, i, team, app, env):
        path = f"argocd/{app}/{env}.yaml"
        d = Doc()
        d.add("apiVersion: argoproj.io/v1alpha1", "kind: Application", "metadata:",
              f"  name: {app}-{env}", "  namespace: argocd", "  labels:", f"    team: {team}",
              "spec:", f"  project: {team}")
        values = f"values-{env}.yaml"
        if env == "prod" and i % 7 == 0:  # multi-source: the chart plus a `$values` ref
            d.add("  sources:", f"    - repoURL: {REPO_URL}", "      targetRevision: HEAD",
                  f"      path: apps/{app}", "      helm:", "        valueFiles:",
                  f"          - $values/apps/{app}/{values}", f"    - repoURL: {REPO_URL}",
                  "      targetRevision: HEAD", "      ref: values")
        else:
            d.add("  source:", f"    repoURL: {REPO_URL}", "    targetRevision: HEAD",
                  f"    path: apps/{app}", "    helm:", f"      releaseName: {app}",
                  "      valueFiles:", f"        - {values}")
        d.add("  destination:")
        d.add("    server: https://kubernetes.default.svc" if env == "dev" else
              f"    name: prod-{'eu' if i % 2 else 'us'}-1")
        ns_line = d.line_of_next()
        if self.maybe("argocd/destination-out-of-project", path):
            other = self.teams[(self.teams.index(team) + 1) % len(self.teams)]
            ns = random.Random(f"{self.args.seed}:ns:{path}").choice(
                [f"{other}-{app}", "default", app[len(team) + 1:]])
            d.add(f"    namespace: {ns}")
            self.planter.record("argocd/destination-out-of-project", path, ns_line, f"namespace {ns}")
        else:
            d.add(f"    namespace: {team}-{app}-{env}")
        self.sync_policy(d, path, "tenant")
        self.put(path, d.text())

    def platform(self):
        base = "k8s/platform/argocd-apps"
        self.put(f"{base}/root.yaml", "\n".join([
            "apiVersion: argoproj.io/v1alpha1", "kind: Application", "metadata:", "  name: root",
            "  namespace: argocd", "spec:", "  project: platform", "  source:",
            f"    repoURL: {REPO_URL}", "    targetRevision: HEAD", f"    path: {base}",
            "  destination:", "    server: https://kubernetes.default.svc", "    namespace: argocd",
            "  syncPolicy:", "    automated:", "      prune: true", "      selfHeal: true"]) + "\n")
        tenants = Doc()
        for k, (name, folder, recurse) in enumerate([("tenants", "argocd", True), ("projects", "projects", False)]):
            if k:
                tenants.add("---")
            tenants.add("apiVersion: argoproj.io/v1alpha1", "kind: Application", "metadata:",
                        f"  name: {name}", "  namespace: argocd", "spec:", "  project: platform",
                        "  source:", f"    repoURL: {REPO_URL}", "    targetRevision: HEAD",
                        f"    path: {folder}")
            if recurse:
                tenants.add("    directory:", "      recurse: true")
            tenants.add("  destination:", "    server: https://kubernetes.default.svc",
                        "    namespace: argocd", "  syncPolicy:", "    automated:",
                        "      prune: true", "      selfHeal: true")
        self.put(f"{base}/tenants.yaml", tenants.text())
        for name, chart_repo, chart, namespace in ADDONS:
            path = f"{base}/{name}.yaml"
            d = Doc()
            d.add("apiVersion: argoproj.io/v1alpha1", "kind: Application", "metadata:",
                  f"  name: {name}", "  namespace: argocd", "spec:", "  project: platform", "  source:")
            if self.maybe("argocd/self-managed", path):
                d.add(f"    repoURL: {REPO_URL}", "    targetRevision: HEAD")
                self.planter.record("argocd/self-managed", path, d.line_of_next(), "Argo CD's own manifests")
                d.add("    path: k8s/platform/argocd")
            else:
                d.add(f"    repoURL: {chart_repo}", f"    chart: {chart}", "    targetRevision: 1.2.3")
            d.add("  destination:", "    server: https://kubernetes.default.svc")
            if self.maybe("argocd/infra-boundary", path):
                ns = random.Random(f"{self.args.seed}:infra:{path}").choice(INFRA_NAMESPACES)
                self.planter.record("argocd/infra-boundary", path, d.line_of_next(), f"namespace {ns}")
                d.add(f"    namespace: {ns}")
            else:
                d.add(f"    namespace: {namespace}")
            self.sync_policy(d, path, "add-on")
            self.put(path, d.text())
        self.put(f"{base}/cluster-addons-appset.yaml", "\n".join([
            "apiVersion: argoproj.io/v1alpha1", "kind: ApplicationSet", "metadata:",
            "  name: cluster-addons", "  namespace: argocd", "spec:", "  goTemplate: true",
            "  generators:", "    - list:", "        elements:",
            "          - addon: podinfo", "            namespace: podinfo",
            "          - addon: descheduler", "            namespace: descheduler",
            "  template:", "    metadata:", "      name: '{{.addon}}'", "    spec:",
            "      project: platform", "      source:",
            "        repoURL: https://charts.example.com/addons", "        chart: '{{.addon}}'",
            "        targetRevision: 1.0.0", "      destination:",
            "        server: https://kubernetes.default.svc", "        namespace: '{{.namespace}}'",
            "      syncPolicy:", "        automated:", "          prune: true",
            "          selfHeal: true"]) + "\n")
        self.argocd_settings()

    def argocd_settings(self):
        path = "k8s/platform/argocd/argocd-cmd-params-cm.yaml"
        planted = self.maybe("argocd/insecure-without-edge-tls", path)
        d = Doc()
        d.add("apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: argocd-cmd-params-cm",
              "  namespace: argocd", "data:")
        insecure_line = d.line_of_next()
        d.add('  server.insecure: "true"', '  reposerver.parallelism.limit: "4"')
        self.put(path, d.text())
        if planted:
            self.planter.record("argocd/insecure-without-edge-tls", path, insecure_line,
                                "plain HTTP, no route to argocd-server")
        listener = ("    - name: http", "      protocol: HTTP", "      port: 80") if planted else (
            "    - name: https", "      protocol: HTTPS", "      port: 443", "      tls:",
            "        mode: Terminate", "        certificateRefs:", "          - name: argocd-tls")
        self.put("k8s/platform/argocd/gateway.yaml", "\n".join([
            "apiVersion: gateway.networking.k8s.io/v1", "kind: Gateway", "metadata:",
            "  name: argocd", "  namespace: argocd", "spec:", "  gatewayClassName: cilium",
            "  listeners:", *listener, "---", "apiVersion: gateway.networking.k8s.io/v1",
            "kind: HTTPRoute", "metadata:", "  name: argocd-server", "  namespace: argocd", "spec:",
            "  parentRefs:", "    - name: argocd", "  hostnames:", "    - argocd.example.com",
            "  rules:", "    - backendRefs:", "        - name: argocd-server", "          port: 80"]) + "\n")
        self.put("k8s/platform/argocd/kustomization.yaml", "\n".join([
            "apiVersion: kustomize.config.k8s.io/v1beta1", "kind: Kustomization", "namespace: argocd",
            "resources:", "  - argocd-cmd-params-cm.yaml", "  - gateway.yaml"]) + "\n")

    # --- kustomize ----------------------------------------------------------------------------
    def dashboard(self, i, app):
        r = random.Random(f"{self.args.seed}:dashboard:{i}")
        panels = []
        for p in range(int(8 * 1.06 ** r.randint(0, 55))):  # 8 to ~200 panels: 8 KB to 130 KB
            panels.append({"id": p, "type": r.choice(["timeseries", "stat", "table", "gauge"]),
                           "title": f"{app} panel {p}",
                           "gridPos": {"h": 8, "w": 12, "x": (p % 2) * 12, "y": p * 8},
                           "targets": [{"expr": f'sum(rate(http_requests_total{{app="{app}",code=~"5.."}}[5m])) by (pod)',
                                        "refId": "A"}],
                           "fieldConfig": {"defaults": {"unit": "reqps", "thresholds": {
                               "mode": "absolute", "steps": [{"color": "green", "value": None},
                                                             {"color": "red", "value": 80}]}}}})
        body = json.dumps({"title": app, "uid": f"d{i}", "panels": panels}, indent=2)
        return "\n".join(["apiVersion: v1", "kind: ConfigMap", "metadata:",
                          f"  name: {app}-dashboard", "  labels:", "    grafana_dashboard: \"1\"",
                          "data:", f"  {app}.json: |"] + ["    " + l for l in body.splitlines()]) + "\n"

    def kustomize_base(self, i, team, app):
        base = f"k8s/base/{app}"
        r = random.Random(f"{self.args.seed}:base:{i}")
        self.put(f"{base}/manifests.yaml", "\n".join([
            "apiVersion: apps/v1", "kind: Deployment", "metadata:", f"  name: {app}", "spec:",
            f"  replicas: {r.randint(1, 4)}", "  selector:", "    matchLabels:", f"      app: {app}",
            "  template:", "    metadata:", "      labels:", f"        app: {app}", "    spec:",
            "      containers:", f"        - name: {app}",
            f"          image: registry.example.com/{team}/{app}:latest",
            "          envFrom:", "            - configMapRef:", f"                name: {app}-config",
            "---", "apiVersion: v1", "kind: Service", "metadata:", f"  name: {app}", "spec:",
            "  selector:", f"    app: {app}", "  ports:", "    - port: 80", "      targetPort: 8080",
            "---", "apiVersion: v1", "kind: ConfigMap", "metadata:", f"  name: {app}-config", "data:",
            f"  LOG_LEVEL: {r.choice(['info', 'debug', 'warn'])}",
            "---", "apiVersion: networking.k8s.io/v1", "kind: NetworkPolicy", "metadata:",
            f"  name: {app}", "spec:", "  podSelector:", "    matchLabels:", f"      app: {app}",
            "  policyTypes: [Ingress]", "  ingress:", "    - from:", "        - podSelector: {}"]) + "\n")
        self.put(f"{base}/dashboard-configmap.yaml", self.dashboard(i, app))
        self.put(f"{base}/kustomization.yaml", "\n".join([
            "apiVersion: kustomize.config.k8s.io/v1beta1", "kind: Kustomization", "resources:",
            "  - manifests.yaml", "  - dashboard-configmap.yaml", "images:",
            f"  - name: registry.example.com/{team}/{app}", f"    newTag: \"{self.tag_value(i, 'base')}\""]) + "\n")
        return base

    def overlay(self, i, team, app, env):
        folder = f"k8s/overlays/{env}/{app}"
        self.put(f"{folder}/kustomization.yaml", "\n".join([
            "apiVersion: kustomize.config.k8s.io/v1beta1", "kind: Kustomization",
            f"namespace: {team}-{app}-{env}", "resources:", f"  - ../../../base/{app}",
            "configMapGenerator:", f"  - name: {app}-settings", "    literals:",
            f"      - ENVIRONMENT={env}", f"      - RELEASE={self.tag_value(i, env)}",
            "replacements:", "  - source:", "      kind: ConfigMap", f"      name: {app}-settings",
            "      fieldPath: data.RELEASE", "    targets:", "      - select:",
            "          kind: Deployment", "        fieldPaths:",
            "          - spec.template.metadata.annotations.release",
            "        options:", "          create: true"]) + "\n")
        path = f"argocd/{app}/kustomize-{env}.yaml"
        d = Doc()
        d.add("apiVersion: argoproj.io/v1alpha1", "kind: Application", "metadata:",
              f"  name: {app}-kustomize-{env}", "  namespace: argocd", "spec:", f"  project: {team}",
              "  source:", f"    repoURL: {REPO_URL}", "    targetRevision: HEAD", f"    path: {folder}",
              "  destination:", "    server: https://kubernetes.default.svc",
              f"    namespace: {team}-{app}-{env}")
        self.sync_policy(d, path, "overlay")
        self.put(path, d.text())

    # --- CI ------------------------------------------------------------------------------------
    def gitlab_ci(self):
        path = ".gitlab-ci.yml"
        d = Doc()
        d.add("workflow:", "  rules:", "    - if: $CI_COMMIT_MESSAGE =~ /\\[skip ci\\]/",
              "      when: never", "    - when: always", "stages: [build, lint, deploy]",
              ".git-setup: &git-setup", "  before_script:",
              "    - git config user.email ci@example.com", "    - git config user.name ci",
              "build:", "  stage: build", "  script:", "    - make build",
              "yamllint:", "  stage: lint", "  script:", "    - yamllint .",
              "scan:", "  stage: lint", "  script:", "    - gitops-lint check . --format sarif")
        jobs = [(f"update-gitops:{team}", team) for team in self.teams] + [("update-image-tag", None)]
        for job, team in jobs:
            d.add(f"{job}:", "  stage: deploy", "  <<: *git-setup", "  script:")
            if team:
                d.add(f"    - yq -i '.image.tag = \"$NEW_TAG\"' apps/$APP/values-prod.yaml")
            else:
                d.add("    - cd k8s/base && kustomize edit set image app=$IMAGE:$NEW_TAG && cd -")
            d.add("    - git add -A")
            site = f"{path}#{job}"
            if self.maybe("ci/writeback-skip-ci", site):
                self.planter.record("ci/writeback-skip-ci", path, d.line_of_next(), f"job {job}")
                d.add(f"    - git commit -m \"Update {team or 'images'} to $NEW_TAG\"")
            else:
                d.add(f"    - git commit -m \"Update {team or 'images'} to $NEW_TAG [skip ci]\"")
            d.add("    - git push origin HEAD:$CI_DEFAULT_BRANCH")
        self.put(path, d.text())

    # --- the whole repository -------------------------------------------------------------------
    def build(self, forced):
        self.forced, self.files, self.planter.truth = forced, {}, []
        self.put("README.md", f"# Synthetic GitOps repository ({self.args.apps} apps, seed {self.args.seed})\n")
        self.projects()
        bases = []
        for i, team, app in self.apps:
            self.chart(i, team, app)
            for env in ("dev", "prod"):
                self.tenant_application(i, team, app, env)
            if i % 3 == 0:
                bases.append(self.kustomize_base(i, team, app))
                if self.args.overlays:
                    for env in ("dev", "prod"):
                        self.overlay(i, team, app, env)
        self.put("k8s/base/kustomization.yaml", "\n".join([
            "apiVersion: kustomize.config.k8s.io/v1beta1", "kind: Kustomization", "resources:",
            *[f"  - {b.split('/', 2)[2]}" for b in bases], "images:",
            "  - name: registry.example.com/shared/sidecar", "    newTag: \"2.1.0\""]) + "\n")
        self.platform()
        self.gitlab_ci()


def generate(args):
    repo = Repo(args)
    repo.build(forced={})
    # A second pass plants the lowest-draw site of each rule the rate left unplanted; every
    # other decision is the same hash, so the rest of the repository is unchanged.
    planted = {t["rule"] for t in repo.planter.truth}
    forced = {r: repo.planter.lowest[r][1] for r in RULES
              if args.violation_rate > 0 and r not in planted and r in repo.planter.lowest}
    if forced:
        repo.build(forced=forced)
    return repo


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--apps", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", default="1")
    ap.add_argument("--violation-rate", type=float, default=0.05)
    ap.add_argument("--chart-templates", action="store_true")
    ap.add_argument("--overlays", action="store_true")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()
    out = os.path.abspath(args.out)
    if os.path.isdir(out) and os.listdir(out):
        if not os.path.exists(os.path.join(out, ".expected.json")):
            sys.exit(f"{out} is not empty and is not a generated repository: refusing to replace it")
        shutil.rmtree(out)
    repo = generate(args)
    for path, text in repo.files.items():
        full = os.path.join(out, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)
    truth = sorted(repo.planter.truth, key=lambda t: (t["file"], t["line"], t["rule"]))
    with open(os.path.join(out, ".expected.json"), "w", encoding="utf-8") as f:
        json.dump(truth, f, indent=1)
        f.write("\n")
    if not args.quiet:
        size = sum(len(t.encode()) for t in repo.files.values())
        print(f"{out}: {len(repo.files)} files, {size / 1e6:.1f} MB, {len(truth)} planted violations")


if __name__ == "__main__":
    main()
