//! ApplicationSet expansion against this repository: `list`, `git` (directories and files,
//! with `exclude`), `matrix` and `merge` generators. Other generators (`clusters`,
//! `scmProvider`, `pullRequest`, `plugin`, ...) only exist at run time: they yield one set of
//! open parameters, so the template is still checked where it does not depend on them.

use globset::GlobBuilder;
use serde_json::{Map, Value as J};

use crate::model::Document;
use crate::model::Repository;
use crate::model::template::{self, Params, Syntax};
use crate::source::Span;
use crate::yaml::{Node, Value};

/// Whether an ApplicationSet syncs its Applications step by step (`strategy.type:
/// RollingSync` with steps), when the controller runs progressive syncs: it then turns their
/// automated sync off and syncs each step itself, pruning only if the template's
/// `syncPolicy.automated.prune` is true (Argo CD's `progressivesync.RollingSyncStrategyEnabled`).
#[must_use]
pub fn rolling_sync(appset: &Node) -> bool {
    let Some(strategy) = appset.path(&["spec", "strategy"]) else {
        return false;
    };
    strategy.get_str("type") == Some("RollingSync")
        && strategy
            .path(&["rollingSync", "steps"])
            .and_then(Node::as_seq)
            .is_some_and(|s| !s.is_empty())
}

/// Most parameter sets one ApplicationSet may produce; the rest are ignored.
pub const MAX_PARAMS: usize = 5_000;

/// One generated Application.
pub struct Generated {
    pub name: String,
    pub name_span: Option<Span>,
    /// The rendered `spec` (spans of the template's nodes).
    pub spec: Node,
}

#[derive(Default)]
pub struct Expansion {
    pub apps: Vec<Generated>,
    /// The first generator that cannot be expanded offline, and where it is.
    pub unexpandable: Option<(String, Span)>,
}

/// What expansion needs to know about the repository.
pub struct RepoView<'a> {
    pub repo: &'a Repository,
    /// Every folder of the repository (`""` is the root).
    pub dirs: &'a rustc_hash::FxHashSet<String>,
    /// Whether a `repoURL` is this repository: `Some(false)` for another one, `None` when
    /// unknown (then it is assumed to be this one).
    pub is_here: &'a dyn Fn(&str) -> Option<bool>,
    /// `applicationsetcontroller.enable.new.git.file.globbing`: the git files generator's
    /// `*` stops at `/` (doublestar). Off, Argo CD lists files with `git ls-files -- PATTERN`,
    /// whose `*` crosses `/` too.
    pub new_git_file_globbing: bool,
}

struct Ctx<'a> {
    repo: &'a RepoView<'a>,
    syntax: Syntax,
    /// Go templates: parameters nested (`.path.basename`), not flattened.
    go: bool,
    unexpandable: Option<(String, Span)>,
}

/// Expands an ApplicationSet document.
#[must_use]
pub fn expand(repo: &RepoView<'_>, doc: &Document) -> Expansion {
    let mut exp = Expansion::default();
    let Some(spec) = doc.root.get("spec") else {
        return exp;
    };
    let Some(tmpl) = spec.get("template") else {
        return exp;
    };
    let syntax = syntax(spec);
    let mut cx = Ctx {
        repo,
        go: matches!(syntax, Syntax::Go { .. }),
        syntax,
        unexpandable: None,
    };
    let mut all = Vec::new();
    for g in spec.get("generators").into_iter().flat_map(Node::items) {
        all.extend(cx.generator(g, &Params::default()));
        if all.len() > MAX_PARAMS {
            all.truncate(MAX_PARAMS);
            break;
        }
    }
    for params in &all {
        let rendered = render_node(tmpl, params, &cx.syntax);
        let Some(app_spec) = rendered.get("spec").cloned() else {
            continue;
        };
        let name_node = rendered.path(&["metadata", "name"]);
        exp.apps.push(Generated {
            name: name_node
                .and_then(Node::scalar_text)
                .map_or_else(|| "<unnamed>".to_string(), template::readable),
            name_span: name_node.map(|n| n.span),
            spec: app_spec,
        });
    }
    exp.unexpandable = cx.unexpandable;
    exp
}

/// The ApplicationSet's template syntax: `goTemplate` and `goTemplateOptions`.
fn syntax(spec: &Node) -> Syntax {
    if spec.get("goTemplate").and_then(Node::as_bool) != Some(true) {
        return Syntax::Fast;
    }
    let options = spec
        .get("goTemplateOptions")
        .into_iter()
        .flat_map(Node::items)
        .filter_map(|o| o.scalar_text().map(str::to_string))
        .collect();
    Syntax::Go { options }
}

/// A copy of `node` with every string rendered; spans stay those of the template.
#[must_use]
pub fn render_node(node: &Node, params: &Params, syntax: &Syntax) -> Node {
    let mut out = node.clone();
    render_in_place(&mut out, params, syntax);
    out
}

fn render_in_place(node: &mut Node, params: &Params, syntax: &Syntax) {
    match &mut node.value {
        Value::Scalar(s) => {
            if s.contains("{{") {
                *s = template::render(s, params, syntax).into();
            }
        }
        Value::Seq(items) => items
            .iter_mut()
            .for_each(|n| render_in_place(n, params, syntax)),
        Value::Map(entries) => {
            for e in entries {
                render_in_place(&mut e.key, params, syntax);
                render_in_place(&mut e.value, params, syntax);
            }
        }
    }
}

impl Ctx<'_> {
    fn unknown(&mut self, kind: &str, span: Span) -> Vec<Params> {
        if self.unexpandable.is_none() {
            self.unexpandable = Some((kind.to_string(), span));
        }
        vec![Params {
            open: true,
            ..Params::default()
        }]
    }

    /// Parameter sets of one generator. `outer` are the parameters of an enclosing matrix's
    /// earlier generator, which this one's fields may reference.
    fn generator(&mut self, g: &Node, outer: &Params) -> Vec<Params> {
        let g = if outer.values.is_empty() && !outer.open {
            g.clone()
        } else {
            render_node(g, outer, &self.syntax)
        };
        for e in g.entries() {
            let key = e.key.scalar_text().unwrap_or("");
            let v = &e.value;
            match key {
                "list" => return self.list(v, e.key.span),
                "git" => return self.git(v, e.key.span),
                "matrix" => return self.matrix(v),
                "merge" => return self.merge(v),
                "clusters" => return self.clusters(v, e.key.span),
                "selector" | "template" | "values" => {}
                other => return self.unknown(other, e.key.span),
            }
        }
        Vec::new()
    }

    /// The clusters are only known at run time, but the generator's static `values:` are
    /// constants (`values.<key>`); one that references a cluster's fields stays unknown.
    fn clusters(&mut self, v: &Node, span: Span) -> Vec<Params> {
        let mut params = self.unknown("clusters", span);
        let constants: Map<String, J> = v
            .get("values")
            .into_iter()
            .flat_map(Node::entries)
            .filter_map(|e| {
                let key = e.key.scalar_text()?;
                let text = e.value.scalar_text()?;
                (!text.contains("{{")).then(|| (key.to_string(), J::String(text.to_string())))
            })
            .collect();
        if !constants.is_empty() {
            let mut m = Map::new();
            m.insert("values".to_string(), J::Object(constants));
            for p in &mut params {
                p.values.extend(self.shape(m.clone()));
            }
        }
        params
    }

    fn list(&mut self, v: &Node, span: Span) -> Vec<Params> {
        if v.get("elementsYaml").is_some() {
            return self.unknown("list.elementsYaml", span);
        }
        v.get("elements")
            .into_iter()
            .flat_map(Node::items)
            .filter_map(|el| match el.to_json() {
                J::Object(m) => Some(Params::new(self.shape(m))),
                _ => None,
            })
            .collect()
    }

    /// fasttemplate parameters are flat (`a.b`), Go template ones nested.
    fn shape(&self, m: Map<String, J>) -> Map<String, J> {
        if self.go {
            return m;
        }
        let mut out = Map::new();
        flatten("", &J::Object(m), &mut out);
        out
    }

    fn git(&mut self, v: &Node, span: Span) -> Vec<Params> {
        let url = v.get_str("repoURL").unwrap_or("");
        if template::is_unknown(url) {
            return self.unknown("git", span);
        }
        if (self.repo.is_here)(url) == Some(false) {
            return self.unknown("git (another repository)", span);
        }
        let prefix = v.get_str("pathParamPrefix").unwrap_or("");
        let values = v.get("values");
        let mut out = Vec::new();
        if let Some(dirs) = v.get("directories") {
            let mut include = Vec::new();
            let mut exclude = Vec::new();
            for d in dirs.items() {
                let Some(p) = d.get_str("path") else {
                    continue;
                };
                let Some(g) = glob(p) else {
                    continue;
                };
                if d.get("exclude").and_then(Node::as_bool) == Some(true) {
                    exclude.push(g);
                } else {
                    include.push(g);
                }
            }
            let mut found: Vec<&String> = self
                .repo
                .dirs
                .iter()
                .filter(|d| !d.is_empty())
                .filter(|d| include.iter().any(|g| g.is_match(d.as_str())))
                .filter(|d| !exclude.iter().any(|g| g.is_match(d.as_str())))
                .collect();
            found.sort();
            for d in found {
                let params = Params::new(self.path_params(prefix, d, None));
                out.push(self.with_values(values, params));
            }
        }
        if let Some(files) = v.get("files") {
            let repo = self.repo.repo;
            let separator = self.repo.new_git_file_globbing;
            let mut include = Vec::new();
            let mut exclude = Vec::new();
            for f in files.items() {
                let Some(p) = f.get_str("path") else {
                    continue;
                };
                let excluded = f.get("exclude").and_then(Node::as_bool) == Some(true);
                if p.ends_with(".json") && !excluded {
                    return self.unknown("git files (JSON)", f.span);
                }
                let Some(g) = glob_with(p, separator) else {
                    continue;
                };
                if excluded {
                    exclude.push(g);
                } else {
                    include.push(g);
                }
            }
            // Files of every include pattern, in its order, less those an exclude matches.
            for g in &include {
                for file in repo.sources.files() {
                    if !g.is_match(&file.path) || exclude.iter().any(|x| x.is_match(&file.path)) {
                        continue;
                    }
                    for doc in repo.file_docs(file.id) {
                        let items: Vec<J> = match repo.tree(doc).to_json() {
                            J::Array(a) => a,
                            o @ J::Object(_) => vec![o],
                            _ => continue,
                        };
                        for item in items {
                            let J::Object(m) = item else { continue };
                            let mut params = self.shape(m);
                            for (k, v) in self.path_params(
                                prefix,
                                crate::model::paths::parent(&file.path),
                                Some(&file.path),
                            ) {
                                params.insert(k, v);
                            }
                            out.push(self.with_values(values, Params::new(params)));
                        }
                    }
                }
            }
        }
        out
    }

    /// A generator's `values:` added to `params` (Argo CD's `appendTemplatedValues`): each
    /// rendered with `params`, as `values.<key>`, or one map `values` in Go templates.
    fn with_values(&self, values: Option<&Node>, mut params: Params) -> Params {
        let rendered: Map<String, J> = values
            .into_iter()
            .flat_map(Node::entries)
            .filter_map(|e| {
                let key = e.key.scalar_text()?;
                let text = e.value.scalar_text()?;
                let value = template::render(text, &params, &self.syntax);
                Some((key.to_string(), J::String(value)))
            })
            .collect();
        if rendered.is_empty() {
            return params;
        }
        if self.go {
            params.values.insert("values".into(), J::Object(rendered));
        } else {
            for (k, v) in rendered {
                params.values.insert(format!("values.{k}"), v);
            }
        }
        params
    }

    fn path_params(&self, prefix: &str, dir: &str, file: Option<&str>) -> Map<String, J> {
        let basename = dir.rsplit('/').next().unwrap_or(dir);
        let segments: Vec<J> = dir
            .split('/')
            .filter(|s| !s.is_empty())
            .map(|s| J::String(s.to_string()))
            .collect();
        let mut path = Map::new();
        path.insert("path".into(), J::String(dir.to_string()));
        path.insert("basename".into(), J::String(basename.to_string()));
        path.insert(
            "basenameNormalized".into(),
            J::String(template::normalize(basename)),
        );
        path.insert("segments".into(), J::Array(segments));
        if let Some(f) = file {
            let name = f.rsplit('/').next().unwrap_or(f);
            path.insert("filename".into(), J::String(name.to_string()));
            path.insert(
                "filenameNormalized".into(),
                J::String(template::normalize(name)),
            );
        }
        let key = if prefix.is_empty() {
            "path".to_string()
        } else {
            format!("{prefix}.path")
        };
        let mut out = Map::new();
        if self.go {
            if prefix.is_empty() {
                out.insert(key, J::Object(path));
            } else {
                let mut inner = Map::new();
                inner.insert("path".into(), J::Object(path));
                out.insert(prefix.to_string(), J::Object(inner));
            }
        } else {
            for (k, v) in path {
                if k == "path" {
                    out.insert(key.clone(), v);
                } else {
                    out.insert(format!("{key}.{k}"), v);
                }
            }
        }
        out
    }

    fn matrix(&mut self, v: &Node) -> Vec<Params> {
        let gens: Vec<&Node> = v
            .get("generators")
            .into_iter()
            .flat_map(Node::items)
            .collect();
        let mut acc = vec![Params::default()];
        for g in gens {
            let mut next = Vec::new();
            for p in &acc {
                for q in self.generator(g, p) {
                    next.push(p.merged(&q));
                    if next.len() > MAX_PARAMS {
                        return next;
                    }
                }
            }
            acc = next;
        }
        acc
    }

    fn merge(&mut self, v: &Node) -> Vec<Params> {
        let keys: Vec<String> = v
            .get("mergeKeys")
            .into_iter()
            .flat_map(Node::items)
            .filter_map(|k| k.scalar_text().map(str::to_string))
            .collect();
        let gens: Vec<&Node> = v
            .get("generators")
            .into_iter()
            .flat_map(Node::items)
            .collect();
        let Some((first, rest)) = gens.split_first() else {
            return Vec::new();
        };
        let mut base = self.generator(first, &Params::default());
        for g in rest {
            let others = self.generator(g, &Params::default());
            for b in &mut base {
                for o in &others {
                    let same = !keys.is_empty()
                        && keys.iter().all(|k| {
                            let bk = b.values.get(k).or_else(|| lookup_nested(&b.values, k));
                            let ok = o.values.get(k).or_else(|| lookup_nested(&o.values, k));
                            bk.is_some() && bk == ok
                        });
                    if same || o.open {
                        *b = b.merged(o);
                    }
                }
            }
        }
        base
    }
}

fn lookup_nested<'m>(m: &'m Map<String, J>, key: &str) -> Option<&'m J> {
    let mut parts = key.split('.');
    let mut cur = m.get(parts.next()?)?;
    for p in parts {
        cur = cur.get(p)?;
    }
    Some(cur)
}

fn flatten(prefix: &str, v: &J, out: &mut Map<String, J>) {
    match v {
        J::Object(m) => {
            for (k, v) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out);
            }
        }
        J::String(_) => {
            out.insert(prefix.to_string(), v.clone());
        }
        other => {
            out.insert(prefix.to_string(), J::String(other.to_string()));
        }
    }
}

/// The git directory generator's patterns (Go's `path.Match`: `*` stops at `/`).
fn glob(p: &str) -> Option<globset::GlobMatcher> {
    glob_with(p, true)
}

fn glob_with(p: &str, literal_separator: bool) -> Option<globset::GlobMatcher> {
    let p = p.trim_start_matches("./").trim_end_matches('/');
    GlobBuilder::new(p)
        .literal_separator(literal_separator)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}
