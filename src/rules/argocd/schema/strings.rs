//! Values Argo CD parses from strings (sync and compare options, hook and sync-wave
//! annotations), the data keys of its ConfigMaps, and `apiVersion`/`kind` of documents that
//! are clearly meant as Argo CD objects.

use super::{Suggestion, rename_key, suggest};
use crate::diagnostic::Finding;
use crate::model::argocd::schema::{CONFIG_MAPS, Schema, Version};
use crate::model::argocd::schema_options::{
    COMPARE_OPTIONS, COMPARE_OPTIONS_ANNOTATION, HOOK, HOOK_DELETE_POLICIES, HOOK_DELETE_POLICY,
    HOOK_TYPES, KNOWN_KEYS, OptionSpec, SYNC_OPTIONS, SYNC_OPTIONS_ANNOTATION, SYNC_WAVE,
    find_option,
};
use crate::model::{DocKind, Document};
use crate::source::Span;
use crate::yaml::{Node, Resolved};

pub const ARGOCD_KINDS: [&str; 3] = ["Application", "ApplicationSet", "AppProject"];
pub const API_VERSION: &str = "argoproj.io/v1alpha1";

/// Kinds of the other Argo projects (Rollouts, Workflows, Events) under `argoproj.io`.
const OTHER_ARGO_KINDS: &[&str] = &[
    "AnalysisRun",
    "AnalysisTemplate",
    "ClusterAnalysisTemplate",
    "ClusterWorkflowTemplate",
    "CronWorkflow",
    "EventBus",
    "EventSource",
    "Experiment",
    "Rollout",
    "Sensor",
    "Workflow",
    "WorkflowArtifactGCTask",
    "WorkflowEventBinding",
    "WorkflowTaskResult",
    "WorkflowTaskSet",
    "WorkflowTemplate",
];

/// One `Name=value` (or bare `Name`) option checked against `options`.
pub fn check_option(
    option: &str,
    options: &[OptionSpec],
    what: &str,
    span: Span,
) -> Option<Finding> {
    let option = option.trim();
    let (name, value) = option.split_once('=').unwrap_or((option, ""));
    let Some(spec) = find_option(options, name) else {
        let names: Vec<&str> = options.iter().map(|o| o.name).collect();
        let help = match suggest(name, &names) {
            Some(s) => format!(
                "Did you mean `{}`? Argo CD ignores unknown options.",
                s.name
            ),
            None => format!(
                "Argo CD ignores unknown options; known: {}.",
                names.join(", ")
            ),
        };
        return Some(Finding::new(format!("unknown {what} `{option}`"), span).with_help(help));
    };
    if spec.values.is_empty() && value.is_empty() || spec.values.contains(&value) {
        return None;
    }
    let allowed = if spec.values.is_empty() {
        format!("`{}` takes no value", spec.name)
    } else {
        format!(
            "Argo CD acts on {}",
            spec.values
                .iter()
                .map(|v| format!("`{}={v}`", spec.name))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Some(
        Finding::new(format!("{what} `{option}` has an unknown value"), span)
            .with_help(format!("{allowed}; it compares the text exactly.")),
    )
}

/// The `argocd.argoproj.io/*` annotations of any object.
pub fn annotations(doc: &Document, version: Version, out: &mut Vec<Finding>) {
    let Some(map) = doc.root.path(&["metadata", "annotations"]) else {
        return;
    };
    let argocd_kind = doc.kind != DocKind::K8sObject && doc.kind != DocKind::Other;
    for e in map.entries() {
        let Some(key) = e.key.scalar_text() else {
            continue;
        };
        if !key.starts_with("argocd.argoproj.io/") {
            continue;
        }
        if !KNOWN_KEYS.contains(&key) {
            if let Some(Suggestion { name, case_only }) = suggest(key, KNOWN_KEYS) {
                let fix = if e.merged() || map.get(name).is_some() {
                    None
                } else {
                    rename_key(&e.key, name, case_only)
                };
                out.push(
                    Finding::new(format!("unknown annotation `{key}`"), e.key.span)
                        .with_help(format!("Did you mean `{name}`? Argo CD ignores this one."))
                        .with_fix(fix),
                );
            }
            continue;
        }
        let value = match e.value.resolve() {
            Some(Resolved::Str(s)) => s,
            Some(Resolved::Null) => continue,
            // On Argo CD kinds the schema walk reports a non-string annotation.
            _ if argocd_kind => continue,
            _ => {
                out.push(
                    Finding::new(format!("annotation `{key}` must be a string"), e.value.span)
                        .with_help("Quote the value: Kubernetes rejects the object otherwise."),
                );
                continue;
            }
        };
        if value.contains("{{") {
            continue;
        }
        let span = e.value.span;
        match key {
            // Argo CD reads the wave with strconv.Atoi: no spaces, no sign other than `-`/`+`.
            SYNC_WAVE if value.parse::<i32>().is_err() => {
                out.push(
                    Finding::new(format!("sync wave `{value}` is not an integer"), span)
                        .with_help("Argo CD refuses to sync the resource: write an integer such as `\"-1\"` or `\"5\"`."),
                );
            }
            HOOK => {
                for part in value.split(',') {
                    let part = part.trim();
                    match HOOK_TYPES.iter().find(|(n, _)| *n == part) {
                        Some((_, Some(since))) if version < *since => out.push(
                            Finding::new(
                                format!("hook `{part}` needs Argo CD {since} or later; the configured version is {version}"),
                                span,
                            )
                            .with_help("Set `argocd.version` in `.gitops-lint.yaml` to the Argo CD release you run."),
                        ),
                        Some(_) => {}
                        None => out.push(unknown_value("hook", part, &HOOK_TYPES.iter().map(|(n, _)| *n).collect::<Vec<_>>(), span)),
                    }
                }
            }
            HOOK_DELETE_POLICY => {
                for part in value.split(',') {
                    let part = part.trim();
                    if !HOOK_DELETE_POLICIES.contains(&part) {
                        out.push(unknown_value(
                            "hook delete policy",
                            part,
                            HOOK_DELETE_POLICIES,
                            span,
                        ));
                    }
                }
            }
            SYNC_OPTIONS_ANNOTATION | COMPARE_OPTIONS_ANNOTATION => {
                let (options, what) = if key == SYNC_OPTIONS_ANNOTATION {
                    (SYNC_OPTIONS, "sync option")
                } else {
                    (COMPARE_OPTIONS, "compare option")
                };
                for part in value.split(',').filter(|p| !p.trim().is_empty()) {
                    out.extend(check_option(part, options, what, span));
                }
            }
            _ => {}
        }
    }
}

fn unknown_value(what: &str, got: &str, known: &[&str], span: Span) -> Finding {
    let help = match suggest(got, known) {
        Some(s) => format!("Did you mean `{}`? Argo CD ignores unknown values.", s.name),
        None => format!("Known values: {}.", known.join(", ")),
    };
    Finding::new(format!("unknown {what} `{got}`"), span).with_help(help)
}

/// The data keys of argocd-cm, argocd-cmd-params-cm and argocd-rbac-cm.
pub fn config_map(doc: &Document, schema: &Schema, version: Version, out: &mut Vec<Finding>) {
    if doc.k8s_kind() != Some("ConfigMap") {
        return;
    }
    let Some(name) = doc.name().filter(|n| CONFIG_MAPS.contains(n)) else {
        return;
    };
    let Some(data) = doc.root.get("data") else {
        return;
    };
    for e in data.entries() {
        match e.value.resolve() {
            Some(Resolved::Str(_) | Resolved::Null) | None => {}
            Some(_) => out.push(
                Finding::new(
                    format!(
                        "`data.{}` of `{name}` must be a string",
                        e.key.scalar_text().unwrap_or("?")
                    ),
                    e.value.span,
                )
                .with_help("Quote the value: Kubernetes rejects a ConfigMap with other values."),
            ),
        }
    }
    config_map_keys(data, name, &[], schema, version, out);
}

/// The argo-cd Helm chart's `configs.cm`, `configs.params` and `configs.rbac` values (also
/// under `argo-cd:` in a chart that depends on it): the chart writes their keys into the
/// ConfigMaps, except its own `create` and `annotations`.
pub fn chart_values(doc: &Document, schema: &Schema, version: Version, out: &mut Vec<Finding>) {
    let root = doc.root.get("argo-cd").unwrap_or(&doc.root);
    let Some(configs) = root.get("configs").filter(|c| c.as_map().is_some()) else {
        return;
    };
    for (section, name) in [
        ("cm", "argocd-cm"),
        ("params", "argocd-cmd-params-cm"),
        ("rbac", "argocd-rbac-cm"),
    ] {
        if let Some(data) = configs.get(section).filter(|d| d.as_map().is_some()) {
            config_map_keys(data, name, &["create", "annotations"], schema, version, out);
        }
    }
}

fn config_map_keys(
    data: &Node,
    name: &str,
    chart_keys: &[&str],
    schema: &Schema,
    version: Version,
    out: &mut Vec<Finding>,
) {
    // A rename is offered only to a key the configured version reads.
    let keys: Vec<&str> = schema
        .config_map_keys(name)
        .iter()
        .map(String::as_str)
        .filter(|k| schema.config_map_key_available(name, k, version))
        .collect();
    for e in data.entries() {
        let Some(key) = e.key.scalar_text() else {
            continue;
        };
        if chart_keys.contains(&key) || schema.config_map_key_known(name, key) != Some(false) {
            continue;
        }
        // `ignore.normalizer.jq.timeout` for `controller.ignore.normalizer.jq.timeout`: a
        // dotted key only (`repositories` is not `helm.repositories`, another setting).
        let suggestion = suggest(key, &keys).or_else(|| {
            if !key.contains('.') {
                return None;
            }
            let mut scoped = keys.iter().filter(|k| {
                k.strip_suffix(key)
                    .is_some_and(|prefix| prefix.ends_with('.'))
            });
            match (scoped.next(), scoped.next()) {
                (Some(only), None) => Some(Suggestion {
                    name: only,
                    case_only: false,
                }),
                _ => None,
            }
        });
        // argocd-cm holds open-ended families and keys read by extensions: report only a
        // near miss of a documented key.
        if suggestion.is_none() && name == "argocd-cm" {
            continue;
        }
        let mut f = Finding::new(format!("unknown key `{key}` in `{name}`"), e.key.span);
        f = match suggestion {
            Some(Suggestion { name: s, case_only }) => {
                let fix = if e.merged() || data.get(s).is_some() {
                    None
                } else {
                    rename_key(&e.key, s, case_only)
                };
                f.with_help(format!("Did you mean `{s}`? Argo CD ignores this key."))
                    .with_fix(fix)
            }
            None => f.with_help("Argo CD ignores keys it does not document."),
        };
        out.push(f);
    }
}

/// A document that is not classified as an Argo CD object but clearly means to be one:
/// `kind: Application` with a misspelled or missing `apiVersion`, or `apiVersion:
/// argoproj.io/...` with a misspelled `kind`. Returns the kind to check it as, if any.
pub fn misclassified<'d>(doc: &'d Document, out: &mut Vec<Finding>) -> Option<&'d str> {
    let root = &doc.root;
    let kind = root.get_str("kind");
    let api = root.get_str("apiVersion");
    match (api, kind) {
        (_, Some(kind)) if ARGOCD_KINDS.contains(&kind) => {
            if let Some(api) = api {
                let close = api.contains("argo") || strsim::levenshtein(api, API_VERSION) <= 4;
                if !close {
                    return None; // another API's Application (app.k8s.io)
                }
                let e = root.entry("apiVersion")?;
                out.push(
                    Finding::new(format!("`{api}` is not Argo CD's API version"), e.value.span)
                        .with_help(format!("Argo CD objects have `apiVersion: {API_VERSION}`; Argo CD ignores this {kind}.")),
                );
                return Some(kind);
            }
            // Without a `spec` mapping it is too little of an Application to judge.
            root.get("spec").and_then(Node::as_map)?;
            let key = misspelled_key(root, "apiVersion");
            let (span, fix) = match key {
                Some((e, s)) => (e.key.span, rename_key(&e.key, "apiVersion", s.case_only)),
                None => (doc.anchor_span(), None),
            };
            let what = if key.is_some() { "a misspelled" } else { "no" };
            out.push(
                Finding::new(format!("this {kind} has {what} `apiVersion`"), span)
                    .with_help(format!(
                        "Argo CD and every tool skip it: write `apiVersion: {API_VERSION}`."
                    ))
                    .with_fix(fix),
            );
            Some(kind)
        }
        (Some(api), Some(kind)) if api.starts_with("argoproj.io/") => {
            if OTHER_ARGO_KINDS.contains(&kind) {
                return None;
            }
            let s = suggest(kind, &ARGOCD_KINDS)?;
            let e = root.entry("kind")?;
            out.push(
                Finding::new(format!("unknown Argo CD kind `{kind}`"), e.value.span).with_help(
                    format!("Did you mean `{}`? Argo CD ignores this object.", s.name),
                ),
            );
            Some(s.name)
        }
        (Some(api), None) if api.starts_with("argoproj.io/") => {
            let (e, s) = misspelled_key(root, "kind")?;
            let kind = e.value.as_str().filter(|k| ARGOCD_KINDS.contains(k))?;
            out.push(
                Finding::new(format!("this {kind} has a misspelled `kind`"), e.key.span)
                    .with_help("Argo CD and every tool skip it: write `kind`.")
                    .with_fix(rename_key(&e.key, "kind", s.case_only)),
            );
            Some(kind)
        }
        _ => None,
    }
}

/// A key of `map` that is a near miss of `want`.
fn misspelled_key<'n>(
    map: &'n Node,
    want: &'static str,
) -> Option<(&'n crate::yaml::Entry, Suggestion<'static>)> {
    map.entries().filter(|e| !e.merged()).find_map(|e| {
        let s = suggest(e.key.scalar_text()?, &[want])?;
        Some((e, s))
    })
}

/// `apiVersion` of a document classified as an Argo CD kind (`argoproj.io/...`).
pub fn api_version(doc: &Document, out: &mut Vec<Finding>) {
    let Some(e) = doc.root.entry("apiVersion") else {
        return;
    };
    match e.value.as_str() {
        Some(API_VERSION) | None => {}
        Some(other) => out.push(
            Finding::new(
                format!("`{other}` is not Argo CD's API version"),
                e.value.span,
            )
            .with_help(format!(
                "Argo CD serves only `{API_VERSION}`: Kubernetes rejects the object."
            )),
        ),
    }
}
