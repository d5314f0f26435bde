//! Every Kubernetes object of the repository, by API group, kind, namespace and name.
//!
//! Built once per run ([`crate::model::Model::k8s`]). An object's namespace is the one
//! kustomize gives it when kustomizations list its file (see
//! [`crate::model::kustomize::Kustomizations::namespaces_by_file`]), else its `metadata.namespace`;
//! `None` when it is unknown (not written, or two kustomizations disagree).

pub mod argocd_install;
pub mod kinds;
pub mod operators;
pub mod routes;

use std::collections::HashMap;

use crate::model::argocd::rendered::RenderedObjects;
use crate::model::kustomize::Kustomizations;
use crate::model::{DocKind, Document};
use crate::source::FileId;
use crate::yaml::{Node, ScalarText};

/// The index, without the documents it points into (see [`Objects`]).
#[derive(Debug, Default)]
pub struct K8sIndex {
    /// The distinct (group, kind) pairs, sorted.
    kinds: Vec<(ScalarText, ScalarText)>,
    /// Sorted by kind (an index in `kinds`), then document order.
    objects: Vec<Indexed>,
}

/// One object: 32 bytes. Its name is read from its document when asked for.
#[derive(Debug)]
struct Indexed {
    kind: u32,
    doc: u32,
    // Inline up to 24 bytes: most namespaces cost no allocation.
    namespace: Option<ScalarText>,
}

/// The API group of an `apiVersion` (`""` for the core group: `v1`).
#[must_use]
pub fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// Indexes the objects among `docs` (manifests and Argo CD objects; kustomizations, charts and
/// CI files are not objects, nor manifests of `unlisted` files), then the `rendered` ones
/// (numbered after `docs`).
#[must_use]
pub fn index(
    docs: &[Document],
    kustomize: &Kustomizations,
    unlisted: &std::collections::HashSet<FileId>,
    rendered: Option<&RenderedObjects>,
) -> K8sIndex {
    let namespaces: HashMap<FileId, Option<String>> = kustomize.namespaces_by_file();
    // (group, kind, document, namespace) of every object, then the kinds numbered in order.
    let mut found: Vec<(&str, &str, usize, Option<ScalarText>)> = docs
        .iter()
        .enumerate()
        .filter(|(_, d)| {
            // A manifest beside a kustomization that does not list it is not deployed (an
            // Argo CD object there may still be applied by hand, as a bootstrap).
            (d.kind == DocKind::K8sObject && !unlisted.contains(&d.file))
                || matches!(
                    d.kind,
                    DocKind::Application | DocKind::ApplicationSet | DocKind::AppProject
                )
        })
        .filter_map(|(i, d)| {
            let (api, kind) = (d.api_version()?, d.k8s_kind()?);
            let namespace = match namespaces.get(&d.file) {
                Some(ns) => ns.as_deref().map(ScalarText::from),
                None => d.namespace().map(ScalarText::from),
            };
            Some((group_of(api), kind, i, namespace))
        })
        .collect();
    if let Some(r) = rendered {
        for (i, (d, meta)) in r.docs.iter().zip(&r.meta).enumerate() {
            let (Some(api), Some(kind)) = (d.api_version(), d.k8s_kind()) else {
                continue;
            };
            let namespace = meta.namespace.as_deref().map(ScalarText::from);
            found.push((group_of(api), kind, docs.len() + i, namespace));
        }
    }
    // Document indexes are distinct, so an unstable sort gives the one order.
    found.sort_unstable_by(|a, b| (a.0, a.1, a.2).cmp(&(b.0, b.1, b.2)));
    let mut kinds: Vec<(ScalarText, ScalarText)> = Vec::new();
    let objects = found
        .into_iter()
        .map(|(group, kind, doc, namespace)| {
            if kinds
                .last()
                .is_none_or(|(g, k)| (g.as_str(), k.as_str()) != (group, kind))
            {
                kinds.push((group.into(), kind.into()));
            }
            Indexed {
                kind: u32::try_from(kinds.len() - 1).unwrap_or(u32::MAX),
                doc: u32::try_from(doc).unwrap_or(u32::MAX),
                namespace,
            }
        })
        .collect();
    K8sIndex { kinds, objects }
}

/// The index with the documents it points into: what rules query.
#[derive(Clone, Copy)]
pub struct Objects<'p> {
    docs: &'p [Document],
    rendered: &'p [Document],
    index: &'p K8sIndex,
}

/// One object.
#[derive(Clone, Copy, Debug)]
pub struct Object<'p> {
    pub doc: &'p Document,
    /// Index of `doc` in `Repository::docs`; a rendered object's is `Repository::docs.len()` plus its
    /// index in `RenderedObjects::docs`.
    pub doc_index: usize,
    pub group: &'p str,
    pub kind: &'p str,
    /// `metadata.name` (`""` when it has none).
    pub name: &'p str,
    /// Its namespace, when known.
    pub namespace: Option<&'p str>,
}

impl<'p> Object<'p> {
    #[must_use]
    pub fn spec(&self) -> Option<&'p Node> {
        self.doc.root.get("spec")
    }
}

impl<'p> Objects<'p> {
    #[must_use]
    pub fn new(docs: &'p [Document], rendered: &'p [Document], index: &'p K8sIndex) -> Self {
        Objects {
            docs,
            rendered,
            index,
        }
    }

    /// Objects of one kind, in document order.
    pub fn of(self, group: &str, kind: &str) -> impl Iterator<Item = Object<'p>> + use<'p> {
        let index = self.index;
        let objects = match index
            .kinds
            .binary_search_by(|(g, k)| (g.as_str(), k.as_str()).cmp(&(group, kind)))
        {
            Ok(id) => {
                let id = u32::try_from(id).unwrap_or(u32::MAX);
                let all = &index.objects;
                let start = all.partition_point(|o| o.kind < id);
                let end = start + all[start..].partition_point(|o| o.kind == id);
                &all[start..end]
            }
            Err(_) => &[],
        };
        let (docs, rendered) = (self.docs, self.rendered);
        objects.iter().map(move |o| {
            let at = o.doc as usize;
            let doc = docs.get(at).unwrap_or_else(|| &rendered[at - docs.len()]);
            let (group, kind) = &index.kinds[o.kind as usize];
            Object {
                doc,
                doc_index: at,
                group,
                kind,
                name: doc.name().unwrap_or(""),
                namespace: o.namespace.as_deref(),
            }
        })
    }

    /// Objects of one kind with this name, in any namespace.
    pub fn named<'a>(
        self,
        group: &str,
        kind: &str,
        name: &'a str,
    ) -> impl Iterator<Item = Object<'p>> + use<'p, 'a> {
        self.of(group, kind).filter(move |o| o.name == name)
    }

    /// Objects that may be `namespace/name`: a namespace unknown on either side matches any.
    pub fn find<'a>(
        self,
        group: &str,
        kind: &str,
        namespace: Option<&'a str>,
        name: &'a str,
    ) -> impl Iterator<Item = Object<'p>> + use<'p, 'a> {
        self.named(group, kind, name)
            .filter(move |o| namespaces_may_match(o.namespace, namespace))
    }
}

/// Two namespaces that may be the same: equal, or one of them unknown.
#[must_use]
pub fn namespaces_may_match(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The object index of a leaked test repository.
    fn objects(repo: &'static crate::model::Repository) -> Objects<'static> {
        let graph = Box::leak(Box::new(crate::model::kustomize::build(repo)));
        let index = Box::leak(Box::new(index(
            &repo.docs,
            graph,
            &graph.unlisted_files(repo),
            None,
        )));
        Objects::new(&repo.docs, &[], index)
    }

    fn names(objs: impl Iterator<Item = Object<'static>>) -> Vec<String> {
        objs.map(|o| format!("{}/{}", o.namespace.unwrap_or("?"), o.name))
            .collect()
    }

    #[test]
    fn objects_by_group_kind_namespace_and_name() {
        let repo = Box::leak(Box::new(crate::model::Repository::in_memory(&[
            (
                "a.yaml",
                "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: prod}\n---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: web}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\n",
            ),
            (
                "b.yaml",
                "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: old, namespace: prod}\n---\napiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {name: web, namespace: prod}\n---\napiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata: {name: team, namespace: argocd}\n",
            ),
            // A kustomization lists the files of its folder (files beside it that it does not
            // list are not deployed).
            ("app/kustomization.yaml", "resources: [c.yaml]\n"),
            (
                "app/c.yaml",
                "apiVersion: v1\nkind: Service\nmetadata: {name: api}\n",
            ),
        ])));
        let objs = objects(repo);
        // Core group `""`, in document order; the Knative Service is another kind.
        assert_eq!(
            names(objs.of("", "Service")),
            ["prod/web", "?/web", "?/api"]
        );
        assert_eq!(
            names(objs.of("serving.knative.dev", "Service")),
            ["prod/web"]
        );
        assert_eq!(names(objs.of("extensions", "Ingress")), ["prod/old"]);
        assert_eq!(names(objs.of("networking.k8s.io", "Ingress")), ["?/web"]);
        assert_eq!(names(objs.of("argoproj.io", "AppProject")), ["argocd/team"]);
        assert_eq!(objs.of("apps", "Deployment").count(), 0);
        // A namespace unknown on either side may match.
        assert_eq!(
            names(objs.find("", "Service", Some("prod"), "web")),
            ["prod/web", "?/web"]
        );
        assert_eq!(
            names(objs.find("", "Service", Some("dev"), "web")),
            ["?/web"]
        );
        assert_eq!(
            names(objs.find("", "Service", None, "web")),
            ["prod/web", "?/web"]
        );
        assert_eq!(names(objs.named("", "Service", "api")), ["?/api"]);
        let svc = objs.named("", "Service", "web").next().expect("web");
        assert_eq!((svc.group, svc.kind, svc.doc_index), ("", "Service", 0));
        assert!(svc.spec().is_none());
    }

    #[test]
    fn a_kustomization_namespace_is_the_object_namespace() {
        let repo = Box::leak(Box::new(crate::model::Repository::in_memory(&[
            (
                "kustomization.yaml",
                "namespace: argocd\nresources: [svc.yaml]\n",
            ),
            (
                "svc.yaml",
                "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: other}\n",
            ),
        ])));
        assert_eq!(names(objects(repo).of("", "Service")), ["argocd/web"]);
        assert!(
            objects(repo)
                .find("", "Service", Some("other"), "web")
                .next()
                .is_none()
        );
    }
}
