//! Walks an Argo CD object against the schema: unknown fields, types, allowed values, required
//! and mutually exclusive fields, and fields the configured Argo CD version does not have.

use super::{Suggestion, rename_key, suggest};
use crate::diagnostic::Finding;
use crate::fix::{Applicability, Edit, Fix};
use crate::model::argocd::schema::{Availability, Schema, Shape, Struct, Version};
use crate::model::argocd::schema_options::SYNC_OPTIONS;
use crate::model::argocd::schema_options::deletes_when_read;
use crate::source::Span;
use crate::yaml::{Node, Resolved, ScalarStyle};

pub struct Walker<'a> {
    pub schema: &'static Schema,
    pub version: Version,
    /// The document's file: its text is read (again, if it was released) only to build a fix.
    pub source: &'a crate::source::SourceFile,
    pub out: Vec<Finding>,
    /// Inside an ApplicationSet template, where `{{...}}` stands for any scalar.
    templated: bool,
    /// Kustomize patches may complete the object: required fields are not judged.
    partial: bool,
    /// The ApplicationSet has a `templatePatch`, which may complete its templates.
    template_patch: bool,
    /// The dotted path of the node being checked (`spec.sources[0].helm`).
    path: String,
    /// The shape a later Argo CD gives the field being checked, when the configured version
    /// has an older one (`clusterResourceWhitelist`): its new keys are named as such.
    newer: Option<&'static Shape>,
}

impl<'a> Walker<'a> {
    pub fn new(
        schema: &'static Schema,
        version: Version,
        source: &'a crate::source::SourceFile,
        partial: bool,
        template_patch: bool,
    ) -> Self {
        Walker {
            schema,
            version,
            source,
            out: Vec::new(),
            templated: false,
            partial,
            template_patch,
            path: String::new(),
            newer: None,
        }
    }

    /// Checks `node`, the value of a field of `shape` (`owner` is the span of its key).
    pub fn value(&mut self, node: &Node, shape: &Shape, allowed: &[String], owner: Span) {
        // Kubernetes prunes a null before validation; Go reads it as the zero value.
        if node.is_null() {
            return;
        }
        if self.templated && node.scalar_text().is_some_and(|s| s.contains("{{")) {
            let scalar_shape = !matches!(shape, Shape::List(_) | Shape::Map(_) | Shape::Object(_));
            if scalar_shape {
                return;
            }
        }
        match shape {
            Shape::Any => {}
            Shape::String | Shape::Bool | Shape::Int | Shape::Number | Shape::IntOrString => {
                self.scalar(node, shape, allowed);
            }
            Shape::List(inner) => {
                let Some(items) = node.as_seq() else {
                    return self.wrong_type(node, shape);
                };
                for (i, item) in items.iter().enumerate() {
                    let len = self.path.len();
                    self.path.push_str(&format!("[{i}]"));
                    // A finding about the item as a whole points at its first key.
                    let first_key = item.as_map().and_then(|m| m.first()).map(|e| e.key.span);
                    self.value(item, inner, &[], first_key.unwrap_or(owner));
                    self.path.truncate(len);
                }
            }
            Shape::Map(inner) => {
                if node.as_map().is_none() {
                    return self.wrong_type(node, shape);
                }
                for e in node.entries() {
                    let len = self.path.len();
                    self.push_key(e.key.scalar_text().unwrap_or("?"));
                    self.value(&e.value, inner, &[], e.key.span);
                    self.path.truncate(len);
                }
            }
            Shape::Object(name) => {
                if node.as_map().is_none() {
                    return self.wrong_type(node, shape);
                }
                if let Some(st) = self.schema.get(name) {
                    self.object(node, name, st, owner);
                }
            }
        }
    }

    /// Something else may add fields: kustomize patches or an ApplicationSet `templatePatch`.
    fn may_be_completed(&self) -> bool {
        self.partial || (self.templated && self.template_patch)
    }

    fn push_key(&mut self, key: &str) {
        if !self.path.is_empty() {
            self.path.push('.');
        }
        self.path.push_str(key);
    }

    /// The node being checked, for messages: "`spec.source`", or "the document".
    fn shown_path(&self) -> String {
        if self.path.is_empty() {
            "the document".to_string()
        } else {
            format!("`{}`", self.path)
        }
    }

    fn object(&mut self, map: &Node, name: &str, st: &'static Struct, owner: Span) {
        // Only this struct's own keys, not those of structs below it.
        let newer = self.newer.take();
        let was_templated = self.templated;
        if name == "ApplicationSetTemplate" {
            self.templated = true;
        }
        // Required fields an unknown key probably meant: reported once, as the unknown key.
        let mut meant: Vec<&str> = Vec::new();
        for e in map.entries() {
            let Some(key) = e.key.scalar_text() else {
                continue;
            };
            if self.templated && key.contains("{{") {
                continue;
            }
            let Some(field) = st.field(key) else {
                meant.extend(self.unknown_field(map, e, st, newer));
                continue;
            };
            let len = self.path.len();
            self.push_key(key);
            match field.availability(self.version) {
                Availability::Yes => {}
                Availability::Since(v) => self.out.push(
                    Finding::new(
                        format!(
                            "`{}` needs Argo CD {v} or later; the configured version is {}",
                            self.path, self.version
                        ),
                        e.key.span,
                    )
                    .with_help(VERSION_HELP),
                ),
                Availability::RemovedIn(v) => self.out.push(
                    Finding::new(
                        format!(
                            "`{}` was removed in Argo CD {v}; the configured version is {}",
                            self.path, self.version
                        ),
                        e.key.span,
                    )
                    .with_help(VERSION_HELP),
                ),
            }
            let shape = field.shape_at(self.version);
            self.newer = (*shape != field.shape).then_some(&field.shape);
            self.value(&e.value, shape, &field.allowed, e.key.span);
            self.newer = None;
            if name == "SyncPolicy" && key == "syncOptions" {
                self.sync_options(&e.value);
            }
            self.path.truncate(len);
        }
        if !self.may_be_completed() {
            for field in st.required() {
                if map.get(&field.name).is_none()
                    && !meant.contains(&field.name.as_str())
                    && field.availability(self.version) == Availability::Yes
                {
                    self.out.push(
                        Finding::new(
                            format!(
                                "{} has no `{}`, which Argo CD requires",
                                self.shown_path(),
                                field.name
                            ),
                            owner,
                        )
                        .with_help("Kubernetes rejects the object without it."),
                    );
                }
            }
        }
        self.exclusive(map, name, owner);
        self.templated = was_templated;
        self.newer = newer;
    }

    /// Reports an unknown key; returns the field it probably means.
    fn unknown_field<'s>(
        &mut self,
        map: &Node,
        e: &crate::yaml::Entry,
        st: &'s Struct,
        newer: Option<&'static Shape>,
    ) -> Option<&'s str> {
        let key = e.key.scalar_text().unwrap_or("");
        let suggestion = meant_field(st, key, self.version);
        let at = if self.path.is_empty() {
            String::new()
        } else {
            format!(" in `{}`", self.path)
        };
        let mut finding = Finding::new(format!("unknown field `{key}`{at}"), e.key.span);
        match suggestion {
            Some(Suggestion { name, case_only }) => {
                let exists = map.get(name).is_some();
                let fix = if exists || e.merged() {
                    None
                } else {
                    // `Prune: true` → `prune: true` turns pruning on: Argo CD would delete
                    // what it keeps today, so the rename needs review.
                    let deletes = deletes_when_read(name, &e.value);
                    rename_key(&e.key, name, case_only && !deletes)
                };
                finding = finding
                    .with_help(format!(
                        "Did you mean `{name}`? Kubernetes drops unknown fields, so Argo CD never sees this one."
                    ))
                    .with_fix(fix);
            }
            None => match self.added_later(newer, key) {
                Some(v) => {
                    finding = finding.with_help(format!(
                        "Argo CD {v} adds `{key}` here; with the configured version, {}, Kubernetes drops it and Argo CD never sees it.",
                        self.version
                    ));
                }
                None => {
                    finding = finding.with_help(
                        "Kubernetes drops unknown fields, so Argo CD never sees this one.",
                    );
                }
            },
        }
        self.out.push(finding);
        suggestion.map(|s| s.name)
    }

    /// The version that adds `key` to the struct of the `newer` shape of the field being
    /// checked.
    fn added_later(&self, newer: Option<&Shape>, key: &str) -> Option<Version> {
        let mut shape = newer?;
        while let Shape::List(inner) | Shape::Map(inner) = shape {
            shape = inner;
        }
        let Shape::Object(name) = shape else {
            return None;
        };
        self.schema.get(name)?.field(key)?.since
    }

    fn scalar(&mut self, node: &Node, shape: &Shape, allowed: &[String]) {
        let Some(resolved) = node.resolve() else {
            return self.wrong_type(node, shape);
        };
        let fits = match (shape, &resolved) {
            (Shape::String, Resolved::Str(_))
            | (Shape::Bool, Resolved::Bool(_))
            | (Shape::Int | Shape::Number | Shape::IntOrString, Resolved::Int(_))
            | (Shape::Number, Resolved::Float(_))
            | (Shape::IntOrString, Resolved::Str(_)) => true,
            // JSON has one number type: `10.0` is the integer 10.
            (Shape::Int | Shape::IntOrString, Resolved::Float(f)) => f.fract() == 0.0,
            _ => false,
        };
        if !fits {
            return self.wrong_type(node, shape);
        }
        if let (Resolved::Str(s), false) = (&resolved, allowed.is_empty()) {
            if !allowed.iter().any(|a| a == s) {
                let list = allowed
                    .iter()
                    .map(|a| format!("`{a}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                self.out.push(
                    Finding::new(
                        format!("`{}` must be one of {list}, not `{s}`", self.path),
                        node.span,
                    )
                    .with_help("Argo CD rejects other values."),
                );
            }
        }
    }

    fn wrong_type(&mut self, node: &Node, shape: &Shape) {
        let found = match node.resolve() {
            None if node.as_seq().is_some() => "a list",
            None => "a mapping",
            Some(Resolved::Str(_)) => "a string",
            Some(Resolved::Bool(_)) => "a boolean",
            Some(Resolved::Int(_)) => "an integer",
            Some(Resolved::Float(_)) => "a number",
            Some(Resolved::Null) => "null",
        };
        let fix = self.retype_fix(node, shape);
        let help = match (shape, node.as_scalar().map(|s| s.style)) {
            (Shape::String, Some(ScalarStyle::Plain)) => {
                "Quote the value: Kubernetes rejects the object otherwise."
            }
            (Shape::Bool | Shape::Int | Shape::Number, Some(_)) if found == "a string" => {
                "Write the value without quotes: Kubernetes rejects the object otherwise."
            }
            _ => "Kubernetes rejects the object otherwise.",
        };
        self.out.push(
            Finding::new(
                format!(
                    "{} must be {}, not {found}",
                    self.shown_path(),
                    shape.describe()
                ),
                node.span,
            )
            .with_help(help)
            .with_fix(fix),
        );
    }

    /// Quotes a plain scalar where a string is expected, or unquotes `"true"` where a boolean
    /// is: unsafe, since the author may have meant another value.
    fn retype_fix(&self, node: &Node, shape: &Shape) -> Option<Fix> {
        let scalar = node.as_scalar()?;
        if node.tag().is_some() {
            return None;
        }
        let raw = self
            .source
            .text()
            .get(node.span.start as usize..node.span.end as usize)?;
        let replacement = match (shape, scalar.style) {
            (Shape::String, ScalarStyle::Plain) if !raw.contains(['"', '\\', '\n', '\r']) => {
                format!("\"{raw}\"")
            }
            (Shape::Bool, ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted)
                if matches!(scalar.text.as_str(), "true" | "false") =>
            {
                scalar.text.to_string()
            }
            (Shape::Int | Shape::Number, ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted)
                if !scalar.text.is_empty() && scalar.text.parse::<i64>().is_ok() =>
            {
                scalar.text.to_string()
            }
            _ => return None,
        };
        Fix::new(
            format!("write `{replacement}`"),
            Applicability::Unsafe,
            vec![Edit {
                span: node.span,
                replacement,
            }],
        )
    }

    /// Fields Argo CD reads one of, ignoring or refusing the other.
    fn exclusive(&mut self, map: &Node, name: &str, owner: Span) {
        // A generator's `template` overrides parts of the ApplicationSet's: Argo CD validates
        // the merged result, which is not known here.
        if self.templated && self.path.contains("generators[") {
            return;
        }
        let text = |n: &Node| n.scalar_text().map(str::to_string);
        match name {
            "ApplicationSpec" => {
                let sources = map.entry("sources").filter(|e| !e.value.is_null());
                let source = map.entry("source").filter(|e| !e.value.is_null());
                if let (Some(source), Some(sources)) = (source, sources) {
                    if sources.value.as_seq().is_some_and(|s| !s.is_empty()) {
                        self.out.push(
                            Finding::new(
                                format!(
                                    "`{}.source` is ignored because `sources` is set",
                                    self.path
                                ),
                                source.key.span,
                            )
                            .with_label(sources.key.span, "Argo CD reads only this")
                            .with_help("Move the source into `sources`, or remove one of the two."),
                        );
                    }
                }
                let hydrator = map.get("sourceHydrator").is_some_and(|n| !n.is_null());
                if source.is_none() && sources.is_none() && !hydrator && !self.may_be_completed() {
                    self.out.push(
                        Finding::new(
                            format!(
                                "{} has no `source`, `sources` or `sourceHydrator`",
                                self.shown_path()
                            ),
                            owner,
                        )
                        .with_help(
                            "Argo CD refuses an Application that deploys nothing: add a `source`.",
                        ),
                    );
                }
            }
            // Only an Application's destination: an AppProject may list both.
            "ApplicationDestination" if !self.path.ends_with(']') => {
                let server = map
                    .entry("server")
                    .filter(|e| text(&e.value).is_some_and(|s| !s.is_empty()));
                let name = map
                    .entry("name")
                    .filter(|e| text(&e.value).is_some_and(|s| !s.is_empty()));
                if let (Some(server), Some(name)) = (server, name) {
                    self.out.push(
                        Finding::new(
                            format!("`{}` sets both `server` and `name`", self.path),
                            name.key.span,
                        )
                        .with_label(server.key.span, "`server` set here")
                        .with_help("Argo CD refuses a destination with both: keep one."),
                    );
                }
            }
            "ApplicationSourceHelm" => {
                let values = map.entry("values").filter(|e| !e.value.is_null());
                let object = map.entry("valuesObject").filter(|e| !e.value.is_null());
                if let (Some(values), Some(object)) = (values, object) {
                    self.out.push(
                        Finding::new(
                            format!(
                                "`{}.values` is ignored because `valuesObject` is set",
                                self.path
                            ),
                            values.key.span,
                        )
                        .with_label(object.key.span, "Argo CD reads only this")
                        .with_help("Merge the two into `valuesObject`."),
                    );
                }
            }
            "ApplicationSource" => self.source(map, owner),
            _ => {}
        }
    }

    /// Argo CD's own validation of a source (`util/argo/argo.go`, `validateSourcePermissions`).
    fn source(&mut self, map: &Node, owner: Span) {
        let in_list = self.path.ends_with(']');
        let has = |k: &str| {
            map.get(k)
                .and_then(Node::scalar_text)
                .is_some_and(|s| !s.is_empty())
        };
        if !has("repoURL") || self.may_be_completed() {
            return; // a missing `repoURL` is reported as a missing required field
        }
        if !(has("path") || has("chart") || in_list && has("ref")) {
            let want = if in_list {
                "`path`, `chart` or `ref`"
            } else {
                "`path` or `chart`"
            };
            self.out.push(
                Finding::new(format!("`{}` has no {want}", self.path), owner).with_help(
                    "Argo CD refuses the source: use `path: .` for the repository root.",
                ),
            );
        } else if has("chart") && !has("targetRevision") {
            self.out.push(
                Finding::new(
                    format!("`{}` has a `chart` but no `targetRevision`", self.path),
                    owner,
                )
                .with_help("Argo CD requires the chart version in `targetRevision`."),
            );
        }
    }

    /// `spec.syncPolicy.syncOptions` entries: `Name=value` from the sync options Argo CD knows.
    fn sync_options(&mut self, list: &Node) {
        for item in list.items() {
            let Some(Resolved::Str(s)) = item.resolve() else {
                continue;
            };
            if self.templated && s.contains("{{") {
                continue;
            }
            if let Some(f) = super::strings::check_option(s, SYNC_OPTIONS, "sync option", item.span)
            {
                self.out.push(f);
            }
        }
    }
}

/// The field of `st` an unknown `key` most likely means, among the fields Argo CD `version`
/// has: a rename is offered only to a key Argo CD would read there.
pub fn meant_field<'s>(st: &'s Struct, key: &str, version: Version) -> Option<Suggestion<'s>> {
    let names: Vec<&str> = st
        .fields()
        .filter(|f| f.availability(version) == Availability::Yes)
        .map(|f| f.name.as_str())
        .collect();
    suggest(key, &names)
}

const VERSION_HELP: &str = "Set `argocd.version` in `.gitops-lint.yaml` to the Argo CD release you run, or remove the field.";
