"""Differential oracle: renders charts with Helm's own SDK (helm-python-sdk) and compares.

stdin: JSON list of {"dir": chart dir, "ours": text | null, "error": text | null}
stdout: JSON list of {"helm": text | null, "helm_error": text | null, "same_yaml": bool,
                      "same_text": bool}
"""
import json
import sys

import yaml

try:
    import helm_python
except ImportError:
    print("NO_HELM", file=sys.stderr)
    sys.exit(3)


def docs(text):
    return [d for d in yaml.safe_load_all(text) if d is not None]


out = []
for case in json.load(sys.stdin):
    helm, helm_error = None, None
    try:
        chart = helm_python.Chart.load(case["dir"])
        rendered = chart.render(None, name="rel", namespace="ns")
        helm = "".join(v for k, v in sorted(rendered.items()) if k.endswith("/t.yaml"))
    except Exception as e:  # noqa: BLE001 - any Helm failure is a failure to compare
        helm_error = str(e)
    ours = case.get("ours")
    same_text = ours is not None and ours == helm
    same_yaml = False
    if ours is None and helm is None:
        same_yaml = True
    elif ours is not None and helm is not None:
        try:
            same_yaml = docs(ours) == docs(helm)
        except Exception:  # noqa: BLE001
            same_yaml = same_text
    out.append({"helm": helm, "helm_error": helm_error, "same_yaml": same_yaml, "same_text": same_text})
json.dump(out, sys.stdout)
