//! The kustomization graph: every kustomization of the repository read as data, and the one
//! walker that follows `resources`, `bases` and `components` inside the repository.
//!
//! Built once per run ([`crate::model::Model::kustomize`]). Nothing is applied here: the
//! `namespace`, `namePrefix`/`nameSuffix`, patches, generators, `helmCharts` and `images` of
//! each kustomization are kept as written, each with its span, for the model and the rules to
//! read. No reference leaves the repository: a remote URL is recorded as remote and not
//! followed, a path climbing above the root as such.

use std::collections::{HashMap, HashSet};

use super::paths::{self, join};
use super::{DocKind, Document, Field, KUSTOMIZATION_FILE_NAMES};
use crate::model::Repository;
use crate::source::{FileId, Span};
use crate::yaml::Node;
use crate::yaml::embedded::parse_embedded;

/// Kustomizations one walk enters at most (a walk follows every path: kustomize renders a base
/// that two overlays include once for each).
const WALK_BUDGET: usize = 100_000;

/// Every kustomization of the repository.
#[derive(Debug, Default)]
pub struct Kustomizations {
    /// In file order.
    nodes: Vec<Kustomization>,
    /// Folder → the kustomization kustomize reads there.
    by_dir: HashMap<String, usize>,
    /// The flags Argo CD runs kustomize with, as the repository sets them.
    pub options: BuildOptions,
}

/// The `kustomize build` flags Argo CD passes, from `kustomize.buildOptions` (or a versioned
/// `kustomize.buildOptions.<version>`) in its `argocd-cm`, or in a values file of the argo-cd
/// chart (`configs.cm`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BuildOptions {
    /// `--load-restrictor LoadRestrictionsNone`: files outside a kustomization's folder may be
    /// read.
    pub unrestricted_loads: bool,
    /// `--enable-helm`: `helmCharts` are inflated (kustomize refuses them otherwise).
    pub enable_helm: bool,
    /// The repository shows the options: it holds Argo CD's `argocd-cm`, or a
    /// `kustomize.buildOptions` of the argo-cd chart's values. Otherwise a flag not set may be
    /// set where Argo CD is installed.
    pub known: bool,
}

impl BuildOptions {
    /// The flags a `kustomize.buildOptions` value holds.
    fn from_text(text: &str) -> BuildOptions {
        BuildOptions {
            unrestricted_loads: text.contains("LoadRestrictionsNone"),
            enable_helm: text.contains("--enable-helm"),
            known: true,
        }
    }

    fn or(self, other: BuildOptions) -> BuildOptions {
        BuildOptions {
            unrestricted_loads: self.unrestricted_loads || other.unrestricted_loads,
            enable_helm: self.enable_helm || other.enable_helm,
            known: self.known || other.known,
        }
    }
}

/// One kustomization file, as written.
#[derive(Debug)]
pub struct Kustomization {
    pub file: FileId,
    /// Its document in `Repository::docs`; `None` for an empty or unparsable file.
    pub doc: Option<usize>,
    /// Its folder (`""` for the root).
    pub dir: String,
    pub namespace: Option<Field>,
    pub name_prefix: Option<Field>,
    pub name_suffix: Option<Field>,
    /// `resources`, then `bases`, then `components`, each in written order.
    pub entries: Vec<Entry>,
    /// In the order kustomize applies them: `patchesStrategicMerge`, then `patches` (both
    /// before `namespace`, `namePrefix` and `nameSuffix`), then `patchesJson6902` (after).
    pub patches: Vec<Patch>,
    /// `configMapGenerator`, then `secretGenerator`.
    pub generators: Vec<Generator>,
    pub helm_charts: Vec<HelmChart>,
    pub images: Vec<Image>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryField {
    Resources,
    Bases,
    Components,
}

impl EntryField {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            EntryField::Resources => "resources",
            EntryField::Bases => "bases",
            EntryField::Components => "components",
        }
    }
}

/// An item of `resources`, `bases` or `components`.
#[derive(Debug)]
pub struct Entry {
    pub field: EntryField,
    /// The path as written.
    pub raw: String,
    pub span: Span,
    pub reference: Reference,
}

/// What a path written in a kustomization names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reference {
    /// A URL or go-getter address: not followed.
    Remote,
    /// `../` climbing above the repository root.
    OutsideRoot,
    /// A file of the repository.
    File(FileId),
    /// A folder whose kustomization is this node of the graph.
    Kustomization(usize),
    /// Any other repository path (a folder without a discovered kustomization, a file that was
    /// not discovered, or nothing): the caller decides, it may look at the disk.
    Other(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchField {
    Patches,
    PatchesStrategicMerge,
    PatchesJson6902,
}

impl PatchField {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            PatchField::Patches => "patches",
            PatchField::PatchesStrategicMerge => "patchesStrategicMerge",
            PatchField::PatchesJson6902 => "patchesJson6902",
        }
    }
}

/// How kustomize applies a patch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchKind {
    StrategicMerge,
    /// RFC 6902 operations (a YAML or JSON list).
    Json6902,
}

/// A patch of a kustomization.
#[derive(Debug)]
pub struct Patch {
    pub field: PatchField,
    /// The list item that declares it.
    pub span: Span,
    pub kind: PatchKind,
    /// `target:` (required by `patchesJson6902`, optional in `patches`).
    pub target: Option<Selector>,
    pub body: PatchBody,
}

#[derive(Debug)]
pub enum PatchBody {
    /// Written in the kustomization (`patch: |`, or YAML in `patchesStrategicMerge`): its
    /// documents, with spans in the kustomization file when the text can be located (a
    /// literal block scalar), else every node at the string's span.
    Inline { span: Span, docs: Vec<Node> },
    /// `path:`, or a `patchesStrategicMerge` entry naming a file: its documents are the file's.
    File { path: Field, reference: Reference },
}

/// A patch's `target`: the objects it applies to.
#[derive(Debug, Default)]
pub struct Selector {
    pub span: Span,
    pub group: Option<Field>,
    pub version: Option<Field>,
    pub kind: Option<Field>,
    pub name: Option<Field>,
    pub namespace: Option<Field>,
    pub label_selector: Option<Field>,
    pub annotation_selector: Option<Field>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GeneratorKind {
    ConfigMap,
    Secret,
}

/// An item of `configMapGenerator` or `secretGenerator`.
#[derive(Debug)]
pub struct Generator {
    pub kind: GeneratorKind,
    pub span: Span,
    pub name: Option<Field>,
    pub namespace: Option<Field>,
    pub behavior: Option<Field>,
    /// `literals` written `key=value`.
    pub literals: Vec<Literal>,
    pub files: Vec<Field>,
    pub envs: Vec<Field>,
}

/// A generator literal `key=value`.
#[derive(Debug)]
pub struct Literal {
    /// The key, trimmed.
    pub key: String,
    /// The value, trimmed and unquoted.
    pub value: String,
    /// The whole literal, trimmed.
    pub text: String,
    pub span: Span,
}

/// An item of `helmCharts`.
#[derive(Debug)]
pub struct HelmChart {
    pub span: Span,
    pub name: Option<Field>,
    pub release_name: Option<Field>,
    pub namespace: Option<Field>,
    pub version: Option<Field>,
    pub repo: Option<Field>,
    /// `valuesFile` and what it names.
    pub values_file: Option<(Field, Reference)>,
    /// `valuesInline`, when it is a mapping.
    pub values_inline: Option<Node>,
    /// `additionalValuesFiles` and what each names.
    pub additional_values_files: Vec<(Field, Reference)>,
}

/// An item of `images`.
#[derive(Debug)]
pub struct Image {
    pub span: Span,
    pub name: Option<Field>,
    pub new_name: Option<Field>,
    /// `newTag` when it is not null (its text, `""` for a collection).
    pub new_tag: Option<Field>,
    pub digest: Option<Field>,
}

/// What a walk meets, in the order kustomize reads it.
pub enum Step<'k> {
    /// A kustomization, reached through `chain` (node indexes from the start of the walk to
    /// this one, inclusive). [`Flow::Skip`] does not read its entries.
    Enter {
        node: &'k Kustomization,
        chain: &'k [usize],
    },
    /// An entry of the kustomization entered last. When it names a kustomization,
    /// [`Flow::Into`] enters it next (unless that would close a cycle).
    Entry {
        node: &'k Kustomization,
        entry: &'k Entry,
    },
    /// The entry just met names a kustomization already on `chain` (from the start of the
    /// walk to the kustomization holding the entry): kustomize fails on it ("cycle
    /// detected"), and the walk does not enter it. The flow returned is not read.
    Cycle {
        entry: &'k Entry,
        chain: &'k [usize],
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Into,
    Skip,
}

/// Argo CD's settings ConfigMap (`argocd::ARGOCD_CM`, a domain above this one).
const ARGOCD_CM: &str = "argocd-cm";

/// The flags the repository has Argo CD run kustomize with: those of each
/// `kustomize.buildOptions` (or a versioned `kustomize.buildOptions.<version>`), in its
/// `argocd-cm` or in a values file of the argo-cd chart (`configs.cm`), together. Values files
/// are looked at as text, the lines that name `kustomize.buildOptions` (a block scalar's next
/// lines too): those still held, and, read once and dropped, those loading released whose path
/// names Argo CD (`argocd`, `argo-cd`), where the chart's values live.
fn build_options(repo: &Repository) -> BuildOptions {
    let from_values = |text: &str| {
        let mut out = BuildOptions::default();
        let mut lines = text.lines().peekable();
        while let Some(line) = lines.next() {
            if !line.contains("kustomize.buildOptions") {
                continue;
            }
            out = out.or(BuildOptions::from_text(line));
            // `kustomize.buildOptions: |` or `>-`: the value is the more indented lines.
            let indent = line.len() - line.trim_start().len();
            while let Some(next) = lines.peek() {
                let more = next.len() - next.trim_start().len();
                if next.trim().is_empty() || more > indent {
                    out = out.or(BuildOptions::from_text(next));
                    lines.next();
                } else {
                    break;
                }
            }
        }
        out
    };
    let mut options = BuildOptions::default();
    for d in repo.docs_of(DocKind::HelmValues) {
        let file = repo.source(d.file);
        if !file.text_was_released() {
            options = options.or(from_values(file.text()));
            continue;
        }
        let path = file.path.to_ascii_lowercase();
        if !(path.contains("argocd") || path.contains("argo-cd")) {
            continue;
        }
        // Read again through the confined layer (inside the root, a regular file, bounded).
        if let Ok(t) = crate::source::fs::Root::new(&repo.root).read_text(
            &file.abs(),
            crate::source::fs::Reach::Root,
            crate::source::fs::MAX_FILE_BYTES,
        ) {
            options = options.or(from_values(&t));
        }
    }
    for d in repo.docs_of(DocKind::K8sObject) {
        if d.root.get_str("kind") != Some("ConfigMap") || d.name() != Some(ARGOCD_CM) {
            continue;
        }
        options.known = true;
        for e in d.root.get("data").into_iter().flat_map(Node::entries) {
            let key = e.key.scalar_text().unwrap_or_default();
            if key.starts_with("kustomize.buildOptions") {
                let value = e.value.scalar_text().unwrap_or_default();
                options = options.or(BuildOptions::from_text(value));
            }
        }
    }
    options
}

/// Reads every kustomization of the repository: each file kustomize would read as a folder's
/// kustomization, and each other file holding a `kustomize.config.k8s.io` document.
#[must_use]
pub fn build(repo: &Repository) -> Kustomizations {
    let mut files: Vec<(FileId, Option<usize>)> = Vec::new();
    let mut by_dir: HashMap<String, (usize, usize)> = HashMap::new();
    for f in repo.sources.files() {
        let name = f.path.rsplit('/').next().unwrap_or(&f.path);
        let range = repo.file_doc_range(f.id);
        let doc = match KUSTOMIZATION_FILE_NAMES.iter().position(|n| *n == name) {
            Some(rank) => {
                let dir = paths::parent(&f.path).to_string();
                let node = files.len();
                let e = by_dir.entry(dir).or_insert((rank, node));
                if rank < e.0 {
                    *e = (rank, node);
                }
                Some(range.start).filter(|_| !range.is_empty())
            }
            None => {
                let mut range = range;
                let Some(i) = range.find(|&i| repo.docs[i].kind == DocKind::Kustomization) else {
                    continue;
                };
                Some(i)
            }
        };
        files.push((f.id, doc));
    }
    let by_dir: HashMap<String, usize> = by_dir.into_iter().map(|(d, (_, n))| (d, n)).collect();
    let reader = Reader {
        repo,
        by_dir: &by_dir,
    };
    let nodes: Vec<Kustomization> = files
        .into_iter()
        .map(|(file, doc)| reader.read(file, doc))
        .collect();
    Kustomizations {
        options: if nodes.is_empty() {
            BuildOptions::default()
        } else {
            build_options(repo)
        },
        nodes,
        by_dir,
    }
}

struct Reader<'a> {
    repo: &'a Repository,
    by_dir: &'a HashMap<String, usize>,
}

impl Reader<'_> {
    fn read(&self, file: FileId, doc: Option<usize>) -> Kustomization {
        let dir = paths::parent(&self.repo.source(file).path).to_string();
        let mut k = Kustomization {
            file,
            doc,
            dir,
            namespace: None,
            name_prefix: None,
            name_suffix: None,
            entries: Vec::new(),
            patches: Vec::new(),
            generators: Vec::new(),
            helm_charts: Vec::new(),
            images: Vec::new(),
        };
        let Some(root) = doc.map(|i| &self.repo.docs[i].root) else {
            return k;
        };
        k.namespace = Field::string(root.get("namespace"));
        k.name_prefix = Field::string(root.get("namePrefix"));
        k.name_suffix = Field::string(root.get("nameSuffix"));
        for field in [
            EntryField::Resources,
            EntryField::Bases,
            EntryField::Components,
        ] {
            for item in items(root, field.as_str()) {
                let Some(raw) = item.as_str() else { continue };
                k.entries.push(Entry {
                    field,
                    raw: raw.to_string(),
                    span: item.span,
                    reference: self.reference(&k.dir, raw),
                });
            }
        }
        self.read_patches(root, &mut k);
        for (key, kind) in [
            ("configMapGenerator", GeneratorKind::ConfigMap),
            ("secretGenerator", GeneratorKind::Secret),
        ] {
            for g in items(root, key) {
                k.generators.push(generator(kind, g));
            }
        }
        for hc in items(root, "helmCharts") {
            k.helm_charts.push(HelmChart {
                span: hc.span,
                name: Field::string(hc.get("name")),
                release_name: Field::string(hc.get("releaseName")),
                namespace: Field::string(hc.get("namespace")),
                version: Field::of(hc.get("version")),
                repo: Field::string(hc.get("repo")),
                values_file: Field::string(hc.get("valuesFile")).map(|f| {
                    let reference = self.reference(&k.dir, &f.value);
                    (f, reference)
                }),
                values_inline: hc
                    .get("valuesInline")
                    .filter(|n| n.as_map().is_some())
                    .cloned(),
                additional_values_files: items(hc, "additionalValuesFiles")
                    .filter_map(|n| Field::string(Some(n)))
                    .map(|f| {
                        let reference = self.reference(&k.dir, &f.value);
                        (f, reference)
                    })
                    .collect(),
            });
        }
        for img in items(root, "images") {
            k.images.push(Image {
                span: img.span,
                name: Field::string(img.get("name")),
                new_name: Field::string(img.get("newName")),
                new_tag: img.get("newTag").filter(|t| !t.is_null()).map(|t| Field {
                    value: t.scalar_text().unwrap_or("").to_string(),
                    span: t.span,
                }),
                digest: Field::string(img.get("digest")),
            });
        }
        k
    }

    /// What `raw`, written in a kustomization of `dir`, names.
    fn reference(&self, dir: &str, raw: &str) -> Reference {
        if paths::is_remote(raw) {
            return Reference::Remote;
        }
        let Some(rel) = join(dir, raw) else {
            return Reference::OutsideRoot;
        };
        if let Some(f) = self.repo.file_by_path(&rel) {
            return Reference::File(f.id);
        }
        match self.by_dir.get(&rel) {
            Some(&node) => Reference::Kustomization(node),
            None => Reference::Other(rel),
        }
    }

    fn read_patches(&self, root: &Node, k: &mut Kustomization) {
        let text = self.repo.source(k.file).text();
        // Each entry is a patch written inline or a file path; kustomize tries the first and
        // falls back to the second.
        for p in items(root, PatchField::PatchesStrategicMerge.as_str()) {
            let Some(raw) = p.as_str() else { continue };
            let docs = parse_embedded(text, p);
            let body = if docs.iter().any(|d| d.as_map().is_some()) {
                PatchBody::Inline { span: p.span, docs }
            } else {
                PatchBody::File {
                    path: Field {
                        value: raw.to_string(),
                        span: p.span,
                    },
                    reference: self.reference(&k.dir, raw),
                }
            };
            k.patches.push(Patch {
                field: PatchField::PatchesStrategicMerge,
                span: p.span,
                kind: PatchKind::StrategicMerge,
                target: None,
                body,
            });
        }
        for field in [PatchField::Patches, PatchField::PatchesJson6902] {
            for p in items(root, field.as_str()) {
                let body = if let Some(inline) = p.get("patch").filter(|b| b.as_str().is_some()) {
                    PatchBody::Inline {
                        span: inline.span,
                        docs: parse_embedded(text, inline),
                    }
                } else if let Some(path) = Field::string(p.get("path")) {
                    let reference = self.reference(&k.dir, &path.value);
                    PatchBody::File { path, reference }
                } else {
                    continue;
                };
                let kind = match field {
                    PatchField::PatchesJson6902 => PatchKind::Json6902,
                    _ => self.kind_of(&body),
                };
                k.patches.push(Patch {
                    field,
                    span: p.span,
                    kind,
                    target: p.get("target").map(selector),
                    body,
                });
            }
        }
    }

    /// `patches` hold either kind: a list of operations is a JSON 6902 patch.
    fn kind_of(&self, body: &PatchBody) -> PatchKind {
        let is_ops = match body {
            PatchBody::Inline { docs, .. } => docs.first().is_some_and(|d| d.as_seq().is_some()),
            PatchBody::File {
                reference: Reference::File(f),
                ..
            } => self
                .repo
                .file_docs(*f)
                .first()
                .is_some_and(|d| d.root.as_seq().is_some()),
            PatchBody::File { .. } => false,
        };
        if is_ops {
            PatchKind::Json6902
        } else {
            PatchKind::StrategicMerge
        }
    }
}

fn items<'n>(root: &'n Node, key: &str) -> impl Iterator<Item = &'n Node> {
    root.get(key).into_iter().flat_map(Node::items)
}

fn selector(t: &Node) -> Selector {
    let s = |key: &str| Field::string(t.get(key));
    Selector {
        span: t.span,
        group: s("group"),
        version: s("version"),
        kind: s("kind"),
        name: s("name"),
        namespace: s("namespace"),
        label_selector: s("labelSelector"),
        annotation_selector: s("annotationSelector"),
    }
}

fn generator(kind: GeneratorKind, g: &Node) -> Generator {
    let list = |key: &str| -> Vec<Field> {
        items(g, key)
            .filter_map(|n| Field::string(Some(n)))
            .collect()
    };
    let literals = items(g, "literals")
        .filter_map(|lit| {
            let text = lit.scalar_text()?;
            let (key, value) = text.split_once('=')?;
            Some(Literal {
                key: key.trim().to_string(),
                value: value
                    .trim()
                    .trim_matches('"')
                    .trim_matches('\'')
                    .to_string(),
                text: text.trim().to_string(),
                span: lit.span,
            })
        })
        .collect();
    Generator {
        kind,
        span: g.span,
        name: Field::string(g.get("name")),
        namespace: Field::string(g.get("namespace")),
        behavior: Field::string(g.get("behavior")),
        literals,
        files: list("files"),
        envs: list("envs"),
    }
}

impl Kustomizations {
    /// Every kustomization, in file order.
    #[must_use]
    pub fn nodes(&self) -> &[Kustomization] {
        &self.nodes
    }

    #[must_use]
    pub fn node(&self, index: usize) -> &Kustomization {
        &self.nodes[index]
    }

    /// The kustomization read from `file`, if it is one.
    #[must_use]
    pub fn of_file(&self, file: FileId) -> Option<&Kustomization> {
        // Nodes are in file order.
        let i = self.nodes.binary_search_by_key(&file, |k| k.file).ok()?;
        self.nodes.get(i)
    }

    /// The kustomization kustomize reads in folder `dir`.
    #[must_use]
    pub fn in_dir(&self, dir: &str) -> Option<usize> {
        self.by_dir.get(dir).copied()
    }

    /// Walks from kustomization `start` depth first, in the order kustomize reads entries.
    /// Every path is followed (a base two overlays include is met twice), except one that
    /// would enter a kustomization already on it; `visit` decides what to skip.
    pub fn walk(&self, start: usize, visit: &mut dyn FnMut(Step<'_>) -> Flow) {
        let Some(first) = self.nodes.get(start) else {
            return;
        };
        let mut budget = WALK_BUDGET;
        let mut chain = vec![start];
        // (node, next entry) for each kustomization of `chain`.
        let mut frames: Vec<(usize, usize)> = Vec::new();
        if visit(Step::Enter {
            node: first,
            chain: &chain,
        }) == Flow::Skip
        {
            return;
        }
        frames.push((start, 0));
        while let Some(top) = frames.last_mut() {
            let node = &self.nodes[top.0];
            let Some(entry) = node.entries.get(top.1) else {
                frames.pop();
                chain.pop();
                continue;
            };
            top.1 += 1;
            let follow = visit(Step::Entry { node, entry });
            let Reference::Kustomization(next) = entry.reference else {
                continue;
            };
            if follow == Flow::Skip || budget == 0 {
                continue;
            }
            if chain.contains(&next) {
                visit(Step::Cycle {
                    entry,
                    chain: &chain,
                });
                continue;
            }
            budget -= 1;
            chain.push(next);
            let step = Step::Enter {
                node: &self.nodes[next],
                chain: &chain,
            };
            if visit(step) == Flow::Into {
                frames.push((next, 0));
            } else {
                chain.pop();
            }
        }
    }

    /// The repository files the kustomizations read: resources, patches, Helm values files.
    #[must_use]
    pub fn referenced_files(&self) -> Vec<FileId> {
        let file = |r: &Reference| match r {
            Reference::File(f) => Some(*f),
            _ => None,
        };
        self.nodes
            .iter()
            .flat_map(|k| {
                k.entries
                    .iter()
                    .filter_map(move |e| file(&e.reference))
                    .chain(k.patches.iter().filter_map(move |p| match &p.body {
                        PatchBody::File { reference, .. } => file(reference),
                        PatchBody::Inline { .. } => None,
                    }))
                    .chain(k.helm_charts.iter().flat_map(move |h| {
                        h.values_file
                            .iter()
                            .chain(&h.additional_values_files)
                            .filter_map(move |(_, r)| file(r))
                    }))
            })
            .collect()
    }

    /// Manifest files kustomize never deploys: in a folder that has a kustomization (Argo CD
    /// and `kubectl apply -k` build it, not the folder's files), referenced by no kustomization
    /// (as a resource, a patch or a values file). A stale file left beside a kustomization is
    /// not an object of the cluster.
    #[must_use]
    pub fn unlisted_files(&self, repo: &Repository) -> HashSet<FileId> {
        if self.nodes.is_empty() {
            return HashSet::new();
        }
        let referenced: HashSet<FileId> = self.referenced_files().into_iter().collect();
        let own: HashSet<FileId> = self.nodes.iter().map(|k| k.file).collect();
        repo.sources
            .all()
            .filter(|f| !referenced.contains(&f.id) && !own.contains(&f.id))
            .filter(|f| {
                let dir = f.path.rsplit_once('/').map_or("", |(d, _)| d);
                self.by_dir.contains_key(dir)
            })
            .map(|f| f.id)
            .collect()
    }

    /// The namespace kustomize gives the objects of each file a kustomization lists (its
    /// resources and its strategic merge patch files): the outermost `namespace:` on the way
    /// from a kustomization nothing includes. `None` when two ways disagree.
    #[must_use]
    pub fn namespaces_by_file(&self) -> HashMap<FileId, Option<String>> {
        let included: HashSet<usize> = self
            .nodes
            .iter()
            .flat_map(|k| &k.entries)
            .filter_map(|e| match e.reference {
                Reference::Kustomization(n) => Some(n),
                _ => None,
            })
            .collect();
        let mut out: HashMap<FileId, Option<String>> = HashMap::new();
        for root in (0..self.nodes.len()).filter(|i| !included.contains(i)) {
            self.walk(root, &mut |step| {
                let Step::Enter { node, chain } = step else {
                    return Flow::Into;
                };
                let ns = chain.iter().find_map(|&i| self.nodes[i].namespace.as_ref());
                if let Some(ns) = ns {
                    for f in node.listed_files() {
                        match out.get(&f) {
                            Some(Some(prev)) if *prev != ns.value => {
                                out.insert(f, None);
                            }
                            Some(None) => {}
                            _ => {
                                out.insert(f, Some(ns.value.clone()));
                            }
                        }
                    }
                }
                // Deep enough for any real overlay stack.
                if chain.len() <= 32 {
                    Flow::Into
                } else {
                    Flow::Skip
                }
            });
        }
        out
    }
}

impl Kustomization {
    /// Files of the repository whose objects this kustomization lists: resource files and
    /// strategic merge patch files.
    fn listed_files(&self) -> impl Iterator<Item = FileId> + '_ {
        let resources = self.entries.iter().filter_map(|e| match e.reference {
            Reference::File(f) => Some(f),
            _ => None,
        });
        let patches = self
            .patches
            .iter()
            .filter_map(|p| match (&p.field, &p.body) {
                (
                    PatchField::PatchesStrategicMerge,
                    PatchBody::File {
                        reference: Reference::File(f),
                        ..
                    },
                ) => Some(*f),
                _ => None,
            });
        resources.chain(patches)
    }
}

impl Patch {
    /// The patch's documents: written inline, or those of its file (`file_docs` gives a file's
    /// documents). Nothing for a file that is not in the repository.
    pub fn docs<'a>(&'a self, file_docs: &dyn Fn(FileId) -> &'a [Document]) -> Vec<&'a Node> {
        match &self.body {
            PatchBody::Inline { docs, .. } => docs.iter().collect(),
            PatchBody::File {
                reference: Reference::File(f),
                ..
            } => file_docs(*f).iter().map(|d| &*d.root).collect(),
            PatchBody::File { .. } => Vec::new(),
        }
    }

    /// The kinds a patch applies to: its target's, and those its documents name.
    pub fn kinds<'a>(&'a self, file_docs: &dyn Fn(FileId) -> &'a [Document]) -> Vec<&'a str> {
        let target = self.target.as_ref().and_then(|t| Field::text(&t.kind));
        target
            .into_iter()
            .chain(
                self.docs(file_docs)
                    .into_iter()
                    .filter_map(|d| d.get_str("kind")),
            )
            .collect()
    }
}

pub mod build;

#[cfg(test)]
pub(crate) mod tests;
