#!/usr/bin/env python3
"""Regenerates src/model/argocd/schema.json from an Argo CD checkout.

Reads the Go API types (pkg/apis/application/v1alpha1/{types,applicationset_types,
app_project_types}.go) at each release tag listed in VERSIONS: field names and json tags,
types, `+kubebuilder:validation:Enum` markers, required fields (no `omitempty` and no
`+optional`, as controller-gen decides), and the first sentence of each field's comment.
Fields present in some versions only get `since`/`until`; a field whose type changed keeps its
earlier types (`earlier`, each with the version that replaced it). Nothing of Argo CD's generated CRDs
is read.

Usage: python3 tools/argocd_schema.py /path/to/argo-cd/.git > src/model/argocd/schema.json
(the argument is any git directory of argoproj/argo-cd holding the tags below).
The update procedure is in docs/argocd-schema.md.
"""
import json
import re
import subprocess
import sys

# The latest patch of each minor version modelled; the last one is the default.
VERSIONS = ["v2.13.9", "v2.14.21", "v3.0.23", "v3.1.16", "v3.2.12", "v3.3.14", "v3.4.7", "v3.5.1"]
FILES = ["types.go", "applicationset_types.go", "app_project_types.go"]
DIR = "pkg/apis/application/v1alpha1/"

# Types from other packages, written by hand from k8s.io/apimachinery.
EXTERNAL = {
    "metav1.TypeMeta": {"apiVersion": ("string", False, "APIVersion defines the versioned schema of this representation of an object."),
                        "kind": ("string", False, "Kind is a string value representing the REST resource this object represents.")},
    "metav1.ObjectMeta": {
        "name": ("string", False, "Name must be unique within a namespace."),
        "generateName": ("string", False, "An optional prefix used by the server to generate a unique name."),
        "namespace": ("string", False, "Namespace defines the space within which each name must be unique."),
        "labels": ("map[string]", False, "Map of string keys and values that can be used to organize and categorize objects."),
        "annotations": ("map[string]", False, "Annotations is an unstructured key value map stored with a resource."),
        "finalizers": ("[]string", False, "Must be empty before the object is deleted from the registry."),
        "ownerReferences": ("[]any", False, "List of objects depended by this object."),
        "uid": ("string", False, "UID is the unique in time and space value for this object."),
        "resourceVersion": ("string", False, "An opaque value that represents the internal version of this object."),
        "generation": ("int", False, "A sequence number representing a specific generation of the desired state."),
        "creationTimestamp": ("any", False, "The time this object was created."),
        "deletionTimestamp": ("any", False, "The time this object will be deleted."),
        "deletionGracePeriodSeconds": ("int", False, "Seconds allowed for this object to gracefully terminate."),
        "managedFields": ("[]any", False, "Maps workflow-id and version to the set of fields managed by that workflow."),
        "selfLink": ("string", False, "Deprecated: selfLink is a legacy read-only field."),
    },
    "metav1.LabelSelector": {
        "matchLabels": ("map[string]", False, "A map of {key,value} pairs; each is a matchExpressions element with operator In."),
        "matchExpressions": ("[]metav1.LabelSelectorRequirement", False, "A list of label selector requirements, ANDed."),
    },
    "metav1.LabelSelectorRequirement": {
        "key": ("string", True, "The label key that the selector applies to."),
        "operator": ("string", True, "A key's relationship to a set of values."),
        "values": ("[]string", False, "An array of string values."),
    },
    "metav1.GroupKind": {
        "group": ("string", True, "The API group."),
        "kind": ("string", True, "The kind."),
    },
}
EXTERNAL_ENUMS = {("metav1.LabelSelectorRequirement", "operator"): ["In", "NotIn", "Exists", "DoesNotExist"]}
SCALAR_EXTERNAL = {
    "metav1.Time": "any", "metav1.Duration": "string", "intstr.IntOrString": "intOrString",
    "runtime.RawExtension": "any", "apiextensionsv1.JSON": "any", "string": "string", "bool": "bool",
    "int": "int", "int32": "int", "int64": "int", "uint32": "int", "uint64": "int", "float64": "number",
    "byte": "int",
}
# Fields Argo CD decodes into another type than the one declared.
OVERRIDES = {
    ("ApplicationSetNestedGenerator", "matrix"): "NestedMatrixGenerator",
    ("ApplicationSetNestedGenerator", "merge"): "NestedMergeGenerator",
}
# Kubernetes fills these; controller-gen never marks them required.
NEVER_REQUIRED = {"metadata", "status", "operation"}
ROOTS = {"Application": "Application", "ApplicationSet": "ApplicationSet", "AppProject": "AppProject"}

FIELD = re.compile(r'^\t(\w+)?\s*([^`]*?)\s*`([^`]*)`\s*(//.*)?$')
EMBED_TAG = re.compile(r'^\t(\*?[\w.]+)\s+`([^`]*)`\s*(//.*)?$')
EMBED = re.compile(r'^\t(\*?[\w.]+)\s*$')


def tag_json(tag):
    m = re.search(r'json:"([^"]*)"', tag)
    if not m:
        return None, set()
    parts = m.group(1).split(",")
    return parts[0], set(parts[1:])


def first_sentence(lines):
    text = " ".join(l for l in lines if not l.startswith("+")).strip()
    m = re.match(r"(.+?\.)(\s|$)", text)
    s = m.group(1) if m else text
    return s[:200]


def parse(src):
    structs, aliases, type_enums = {}, {}, {}
    lines = src.split("\n")
    comments = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("//"):
            comments.append(line[2:].strip())
            i += 1
            continue
        m = re.match(r"^type (\w+) struct \{\s*(//.*)?$", line)
        if m:
            name = m.group(1)
            fields = []
            fcomments = []
            i += 1
            while i < len(lines) and not lines[i].startswith("}"):
                l = lines[i]
                s = l.strip()
                if s.startswith("//"):
                    fcomments.append(s[2:].strip())
                elif not s:
                    fcomments = []
                else:
                    et = EMBED_TAG.match(l)
                    fm = FIELD.match(l)
                    em = EMBED.match(l)
                    if et:
                        fields.append((None, et.group(1), et.group(2), fcomments))
                    elif fm:
                        gname, gtype, tag = fm.group(1), fm.group(2), fm.group(3)
                        if gname and not gtype:  # embedded type with a tag
                            gname, gtype = None, gname
                        if gtype.startswith("*") and gname is None:
                            pass
                        fields.append((gname, gtype.strip(), tag, fcomments))
                    elif em:
                        fields.append((None, em.group(1), "", fcomments))
                    fcomments = []
                i += 1
            structs[name] = fields
            comments = []
            i += 1
            continue
        m = re.match(r"^type (\w+) =?\s*([\[\]\w.*]+)\s*$", line)
        if m:
            aliases[m.group(1)] = m.group(2)
            for c in comments:
                em = re.match(r"\+kubebuilder:validation:Enum=(.*)", c)
                if em:
                    type_enums[m.group(1)] = [v for v in em.group(1).split(";") if v]
        comments = []
        i += 1
    return structs, aliases, type_enums


def build(structs, aliases, type_enums):
    types = {}

    def texpr(g):
        g = g.lstrip("*")
        if g.startswith("[]"):
            return "[]" + texpr(g[2:])
        if g.startswith("map["):
            return "map[" + texpr(g[g.index("]") + 1:]) + "]"
        if g in SCALAR_EXTERNAL:
            return SCALAR_EXTERNAL[g]
        if g in EXTERNAL:
            want_external(g)
            return g
        if g in structs:
            want(g)
            return g
        if g in aliases:
            return texpr(aliases[g])
        return "any"

    pending = []

    def want(name):
        if name not in types:
            types[name] = None
            pending.append(name)

    def want_external(name):
        if name not in types:
            fields = {}
            for k, (t, req, doc) in EXTERNAL[name].items():
                f = {"type": t if t in ("string", "bool", "int", "any", "map[string]", "[]string", "[]any") else None, "doc": doc}
                if t == "map[string]":
                    f["type"] = "map[string]"
                if f["type"] is None:
                    f["type"] = "[]" + t[2:] if t.startswith("[]") else t
                    inner = t[2:] if t.startswith("[]") else t
                    types[name] = {}
                    want_external(inner)
                if req:
                    f["required"] = True
                if (name, k) in EXTERNAL_ENUMS:
                    f["enum"] = EXTERNAL_ENUMS[(name, k)]
                fields[k] = f
            types[name] = fields

    def struct_fields(name):
        out = {}
        for gname, gtype, tag, comments in structs[name]:
            jname, opts = tag_json(tag)
            if jname == "-":
                continue
            if gname is None and not jname:
                # Embedded: fields are promoted (inline).
                base = gtype.lstrip("*")
                if base in structs:
                    out.update(struct_fields(base))
                elif base in EXTERNAL:
                    for k, (t, req, doc) in EXTERNAL[base].items():
                        out[k] = {"type": t, "doc": doc}
                continue
            if jname is None:
                continue
            if jname == "":
                jname = gname
            if gname is None:
                gname = jname
            t = OVERRIDES.get((name, jname))
            if t:
                want(t)
            else:
                t = texpr(gtype)
            f = {"type": t, "doc": first_sentence(comments)}
            markers = [c for c in comments if c.startswith("+")]
            optional = "omitempty" in opts or any(c == "+optional" or c.startswith("+kubebuilder:validation:Optional") for c in markers)
            if any(c.startswith("+kubebuilder:validation:Required") for c in markers):
                optional = False
            if not optional and jname not in NEVER_REQUIRED:
                f["required"] = True
            enum = None
            for c in markers:
                em = re.match(r"\+kubebuilder:validation:Enum=(.*)", c)
                if em:
                    enum = [v for v in em.group(1).split(";") if v]
            base = gtype.lstrip("*[]")
            if enum is None and base in type_enums:
                enum = type_enums[base]
            if enum:
                f["enum"] = enum
            out[jname] = f
        return out

    for r in ROOTS.values():
        want(r)
    while pending:
        n = pending.pop()
        types[n] = struct_fields(n)
    return types


def at(gitdir, tag):
    src = "\n".join(
        subprocess.run(["git", "--git-dir", gitdir, "show", f"{tag}:{DIR}{f}"], check=True,
                       capture_output=True, text=True).stdout for f in FILES)
    return build(*parse(src))


def git(gitdir, *args):
    return subprocess.run(["git", "--git-dir", gitdir, *args], capture_output=True, text=True).stdout


# Keep in sync with `CONFIG_MAP_FAMILIES` in src/model/argocd/schema.rs.
FAMILIES = {"argocd-cm": ("accounts.", "resource.customizations.", "help.download.", "kustomize.path.",
                          "kustomize.buildOptions.", "kustomize.version.")}
DATA_KEY = re.compile(r'^  "?([A-Za-z][A-Za-z0-9_./-]*)"?:')
SETTING_CONST = re.compile(r'^\t\w+\s*=\s*"([a-z][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)+|url|additionalUrls|installationID|globalProjects|passwordPattern)"')


def config_map_keys(gitdir, tag):
    """The data keys of argocd-cm, argocd-cmd-params-cm and argocd-rbac-cm at `tag`: the keys in
    the documented example file, plus the keys the manifests read through configMapKeyRef, plus
    (argocd-cm) the setting keys declared in util/settings/settings.go."""
    out = {}
    for cm in ("argocd-cm", "argocd-cmd-params-cm", "argocd-rbac-cm"):
        keys = set()
        in_data = False
        for line in git(gitdir, "show", f"{tag}:docs/operator-manual/{cm}.yaml").split("\n"):
            if not line.startswith(" ") and line.strip():
                in_data = line.startswith("data:")
                continue
            m = DATA_KEY.match(line)
            if in_data and m:
                keys.add(m.group(1))
        refs = git(gitdir, "grep", "-h", "-A1", f"name: {cm}$", tag, "--", "manifests/base")
        keys.update(re.findall(r"key: ([A-Za-z0-9_.-]+)", refs))
        if cm == "argocd-cm":
            for line in git(gitdir, "show", f"{tag}:util/settings/settings.go").split("\n"):
                m = SETTING_CONST.match(line)
                if m:
                    keys.add(m.group(1))
        # Open-ended families (`accounts.<name>`): the model knows them by prefix.
        out[cm] = {k for k in keys if not k.startswith(FAMILIES.get(cm, ()))}
    return out


def merge_keys(gitdir, short):
    merged = {}
    for idx, v in enumerate(VERSIONS):
        for cm, keys in config_map_keys(gitdir, v).items():
            for k in keys:
                merged.setdefault(cm, {}).setdefault(k, []).append(idx)
    out = {}
    for cm, keys in sorted(merged.items()):
        rows = {}
        for k, seen in sorted(keys.items()):
            row = {}
            if seen[0] > 0:
                row["since"] = short(VERSIONS[seen[0]])
            if seen[-1] < len(VERSIONS) - 1:
                row["until"] = short(VERSIONS[seen[-1] + 1])
            rows[k] = row
        out[cm] = rows
    return out


def main():
    gitdir = sys.argv[1]
    per = [(v, at(gitdir, v)) for v in VERSIONS]
    short = lambda v: ".".join(v.lstrip("v").split(".")[:2])
    merged = {}
    for idx, (v, types) in enumerate(per):
        for tname, fields in types.items():
            mt = merged.setdefault(tname, {})
            for fname, f in fields.items():
                mf = mt.get(fname)
                if mf is None:
                    mf = dict(f)
                    mf["_seen"] = []
                    mf["_types"] = []
                    mt[fname] = mf
                else:
                    seen, types_seen = mf["_seen"], mf["_types"]
                    mf.update(f)
                    mf["_seen"], mf["_types"] = seen, types_seen
                mf["_seen"].append(idx)
                mf["_types"].append((idx, f["type"]))
    for tname, fields in merged.items():
        for fname, f in fields.items():
            seen = f.pop("_seen")
            # A field whose type was another one in earlier versions
            # (`clusterResourceWhitelist`: `[]metav1.GroupKind` before 3.3): each earlier type
            # and the first version that no longer has it.
            earlier = []
            types_seen = f.pop("_types")
            for (_, ty), (nidx, nty) in zip(types_seen, types_seen[1:]):
                if ty != nty:
                    earlier.append({"type": ty, "until": short(VERSIONS[nidx])})
            if earlier:
                f["earlier"] = earlier
            if seen[0] > 0:
                f["since"] = short(VERSIONS[seen[0]])
            if seen[-1] < len(VERSIONS) - 1:
                f["until"] = short(VERSIONS[seen[-1] + 1])
            if not f["doc"]:
                del f["doc"]
    out = {
        "generated_from": "argoproj/argo-cd " + ", ".join(VERSIONS),
        "versions": [short(v) for v in VERSIONS],
        "roots": ROOTS,
        "types": {k: merged[k] for k in sorted(merged)},
        "config_maps": merge_keys(gitdir, short),
    }
    json.dump(out, sys.stdout, indent=0, sort_keys=False, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
