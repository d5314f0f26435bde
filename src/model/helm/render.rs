//! Rendering a chart as Helm does: the templates of every enabled chart named and parsed in
//! Helm's order, rendered with the objects a template sees (`.Values`, `.Release`, `.Chart`,
//! `.Capabilities`, `.Template`, `.Files`) within the run's budget; `crds/` copied as they are.

use std::collections::BTreeMap;

use gotmpl::{Source, Templates, Usage, Value};

use super::budget::{LIMITS, RenderBudget};
use super::chart::Chart;
use super::coalesce::{coalesce_deps, coalesce_into, enabled_subcharts, imports, to_value};
use super::objects::{ApiVersions, Files};
use super::values::Values;
use crate::model::paths::join;
use crate::source::Span;

/// Why a chart cannot be rendered.
#[derive(Debug, Clone)]
pub struct RenderError {
    /// Repository-relative file (a template, or the chart folder).
    pub path: String,
    /// 1-based line in that file (0 when not known).
    pub line: usize,
    pub message: String,
    /// The unsupported template function, when that is the reason.
    pub unsupported: Option<String>,
    /// A limit stopped it (of the template, or the run's [`RenderBudget`]), not the chart.
    pub over_budget: bool,
}

impl RenderError {
    /// The run's budget was spent before the chart in `dir` was rendered.
    fn budget_spent(dir: &str) -> Self {
        RenderError {
            path: dir.to_string(),
            line: 0,
            message: RenderBudget::spent_message(),
            unsupported: None,
            over_budget: true,
        }
    }
}

impl std::fmt::Display for RenderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}: {}", self.path, self.line, self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// The release an Application installs.
#[derive(Debug, Clone)]
pub struct Release {
    pub name: String,
    pub namespace: String,
    /// `.Capabilities.KubeVersion.Version` (Helm's default: `v1.36.0` for Helm 4.2).
    pub kube_version: String,
    /// Extra `.Capabilities.APIVersions` (Argo CD's `helm.apiVersions`).
    pub api_versions: Vec<String>,
}

impl Release {
    #[must_use]
    pub fn new(name: &str, namespace: &str) -> Self {
        Release {
            name: name.to_string(),
            namespace: namespace.to_string(),
            kube_version: "v1.36.0".into(),
            api_versions: Vec::new(),
        }
    }

    /// With what `.Capabilities` reports as an install writes it (Argo CD's `helm` block and
    /// kustomize's `helmCharts` items alike): `kubeVersion`, with or without its `v`, and the
    /// `apiVersions` list.
    #[must_use]
    pub fn with_capabilities(
        mut self,
        kube_version: Option<&str>,
        api_versions: Option<&crate::yaml::Node>,
    ) -> Self {
        if let Some(v) = kube_version {
            self.kube_version = format!("v{}", v.strip_prefix('v').unwrap_or(v));
        }
        self.api_versions = api_versions
            .into_iter()
            .flat_map(crate::yaml::Node::items)
            .filter_map(crate::yaml::Node::as_str)
            .map(str::to_string)
            .collect();
        self
    }
}

/// Renders `chart` with `values` (the effective values: the chart's `values.yaml` merged with the
/// Application's layers, as the resolver computes them).
pub fn render(chart: &Chart, values: &Values, release: &Release) -> Result<Rendered, RenderError> {
    render_with(chart, values, release, &mut None, &RenderBudget::default())
}

/// The templates of a chart parsed for one set of enabled subcharts, to render the chart again
/// with other values (see [`render_with`]).
pub struct Parsed {
    /// The enabled charts (template name prefixes) the set was parsed for.
    units: Vec<String>,
    set: Templates,
}

/// [`render`], reusing `parsed` when the same subcharts are enabled (templates are parsed once
/// per chart, not once per rendering); `parsed` is filled or replaced otherwise. Not shared
/// between threads (parsed templates hold `Rc`s).
pub fn render_with(
    chart: &Chart,
    values: &Values,
    release: &Release,
    parsed: &mut Option<Parsed>,
    budget: &RenderBudget,
) -> Result<Rendered, RenderError> {
    render_cached(chart, values, release, parsed, budget, None)
}

/// [`render_with`], taking the parse of each template text from `cache` when another chart
/// rendered on this thread had the same text (charts generated from one starter share their
/// templates byte for byte).
pub fn render_cached(
    chart: &Chart,
    values: &Values,
    release: &Release,
    parsed: &mut Option<Parsed>,
    budget: &RenderBudget,
    mut cache: Option<&mut gotmpl::ParseCache>,
) -> Result<Rendered, RenderError> {
    if budget.is_spent() {
        return Err(RenderError::budget_spent(&chart.dir));
    }
    // The chart's templates share `.Values`, and a template's `set` may make a map hold
    // itself: every map of this rendering is freed when it returns.
    let _maps = gotmpl::MapScope::new();
    let mut out = Rendered::default();
    let top = to_value(values, &mut out.origins);
    coalesce_deps(chart, &top, &top, &mut out.origins);
    // `import-values` of the top chart: below its own values and its subcharts' defaults.
    if let Some(imported) = imports(chart, &top, &mut out.origins) {
        coalesce_into(&top, &imported);
    }
    // Every template of every enabled chart, named as Helm names them.
    let mut units: Vec<Unit> = Vec::new();
    collect_units(chart, &chart.name, &top, &mut units);
    let prefixes: Vec<String> = units.iter().map(|u| u.prefix.clone()).collect();
    let reuse = parsed.as_ref().is_some_and(|p| p.units == prefixes);
    let mut set = match parsed.take() {
        Some(p) if reuse => p.set,
        _ => Templates::helm(),
    };
    let mut order: Vec<(String, usize, usize)> = Vec::new();
    for (u, unit) in units.iter().enumerate() {
        for (t, (rel, text)) in unit.chart.templates.iter().enumerate() {
            let name = format!("{}/{rel}", unit.prefix);
            let path = join(&unit.chart.dir, rel).unwrap_or_default();
            out.paths.insert(name.clone(), path.clone());
            if let Some(b) = unit.chart.builtin {
                out.builtin.insert(path.clone(), b);
            }
            out.texts.insert(path, text.clone());
            order.push((name, u, t));
        }
    }
    // Helm parses deeper paths first, then in reverse name order; later definitions win.
    order.sort_by(|a, b| {
        let (da, db) = (a.0.matches('/').count(), b.0.matches('/').count());
        db.cmp(&da).then_with(|| b.0.cmp(&a.0))
    });
    if !reuse {
        for (name, u, t) in &order {
            let text = &units[*u].chart.templates[*t].1;
            let added = match cache.as_deref_mut() {
                Some(cache) => set.add_cached(name, text, cache),
                None => set.add(name, text),
            };
            if let Err(e) = added {
                return Err(error(&out, &e));
            }
        }
    }
    let mut shared: Vec<Option<UnitData>> = units.iter().map(|_| None).collect();
    for (name, u, _) in &order {
        let base = name.rsplit('/').next().unwrap_or(name);
        if base.starts_with('_') || base == "NOTES.txt" {
            continue;
        }
        let unit = &units[*u];
        let unit_shared = shared[*u].get_or_insert_with(|| unit_data(unit, release));
        let data = render_data(unit, unit_shared, name);
        let Some(limits) = budget.limits() else {
            return Err(RenderError::budget_spent(&chart.dir));
        };
        let mut used = Usage::default();
        let rendered = set.render_metered(name, &data, &limits, &mut used);
        budget.spend(&used);
        out.used.steps += used.steps;
        out.used.output_bytes += used.output_bytes;
        out.used.built_bytes += used.built_bytes;
        let rendered = rendered.map_err(|e| {
            let mut e = error(&out, &e);
            // Stopped by what the run had left rather than by the template's own limits.
            if e.over_budget
                && (limits.steps < LIMITS.steps
                    || limits.output_bytes < LIMITS.output_bytes
                    || limits.built_bytes < LIMITS.built_bytes)
            {
                e.message = RenderBudget::spent_message();
            }
            e
        })?;
        out.manifests.push(Manifest {
            path: out.paths.get(name).cloned().unwrap_or_default(),
            text: rendered.text,
            segments: rendered.segments,
            dropped: rendered.dropped,
            crd: false,
        });
    }
    for unit in &units {
        for (rel, text) in &unit.chart.crds {
            let path = join(&unit.chart.dir, rel).unwrap_or_default();
            let name = format!("{}/{rel}", unit.prefix);
            out.paths.insert(name.clone(), path.clone());
            out.texts.insert(path.clone(), text.clone());
            let segments = if text.is_empty() {
                Vec::new()
            } else {
                vec![(
                    0..text.len(),
                    Source::Template {
                        name: name.as_str().into(),
                        range: 0..text.len(),
                    },
                )]
            };
            out.manifests.push(Manifest {
                path,
                text: text.clone(),
                segments,
                dropped: Vec::new(),
                crd: true,
            });
        }
    }
    out.manifests.sort_by(|a, b| a.path.cmp(&b.path));
    *parsed = Some(Parsed {
        units: prefixes,
        set,
    });
    Ok(out)
}

fn error(out: &Rendered, e: &gotmpl::Error) -> RenderError {
    let mut path = out
        .paths
        .get(&*e.template)
        .cloned()
        .unwrap_or_else(|| e.template.to_string());
    // A built-in chart's template is named as the chart ships it (`argocd-apps/templates/x`).
    if let Some(chart) = out.builtin.get(&path) {
        if let Some(i) = path.rfind("/templates/") {
            path = format!("{chart}{}", &path[i..]);
        }
    }
    RenderError {
        path,
        line: e.line,
        message: e.message.clone(),
        unsupported: match &e.kind {
            gotmpl::ErrorKind::Unsupported(f) => Some(f.clone()),
            _ => None,
        },
        over_budget: e.kind == gotmpl::ErrorKind::Budget,
    }
}

/// One rendered template file.
#[derive(Debug)]
pub struct Manifest {
    /// Repository-relative path of the template (or CRD) file.
    pub path: String,
    pub text: String,
    pub(super) segments: Vec<gotmpl::Segment>,
    /// Where a missing value printed nothing (see [`gotmpl::Output::dropped`]).
    pub(super) dropped: Vec<usize>,
    /// A file of a chart's `crds/` (`helm template` prints them only with `--include-crds`).
    pub crd: bool,
}

/// What a rendering produced: manifests, and the template texts to locate lines in.
#[derive(Debug, Default)]
pub struct Rendered {
    pub manifests: Vec<Manifest>,
    /// Value spans by origin handle.
    pub(super) origins: Vec<Span>,
    /// Template name (as Helm names it) → repository-relative path.
    pub(super) paths: BTreeMap<String, String>,
    /// Repository-relative path → template text.
    pub(super) texts: BTreeMap<String, String>,
    /// Paths of built-in charts' templates → the chart's name.
    pub(super) builtin: BTreeMap<String, &'static str>,
    /// The values were the chart's defaults alone, for a chart no Application installs: a
    /// missing value is given at install time, so [`documents`](super::documents()) writes a
    /// scalar that printed one as unknown ([`UNKNOWN`](crate::model::template::UNKNOWN)) rather
    /// than as Helm's empty text.
    pub missing_is_unknown: bool,
    /// What its templates spent of the run's [`RenderBudget`].
    pub used: Usage,
}

/// One chart to render: its templates' name prefix and its `.Values`.
struct Unit<'c> {
    chart: &'c Chart,
    prefix: String,
    values: Value,
}

fn collect_units<'c>(chart: &'c Chart, prefix: &str, values: &Value, out: &mut Vec<Unit<'c>>) {
    out.push(Unit {
        chart,
        prefix: prefix.to_string(),
        values: values.clone(),
    });
    for (sub, key) in enabled_subcharts(chart, values) {
        let sub_values = match values {
            Value::Map(m) => m
                .borrow()
                .get(&key)
                .cloned()
                .unwrap_or_else(Value::empty_map),
            _ => Value::empty_map(),
        };
        // Helm names a subchart's templates by its alias, else its chart name.
        collect_units(sub, &format!("{prefix}/charts/{key}"), &sub_values, out);
    }
}

fn str_map(entries: &[(&str, Value)]) -> Value {
    Value::map(
        entries
            .iter()
            .map(|(k, v)| ((*k).to_string(), v.clone()))
            .collect(),
    )
}

/// The objects every template of one chart sees, built once per rendering and shared by its
/// templates as Helm shares them (each template gets its own top-level map, with its
/// `.Template`).
struct UnitData {
    values: Value,
    release: Value,
    chart: Value,
    capabilities: Value,
    files: Value,
}

fn unit_data(unit: &Unit<'_>, release: &Release) -> UnitData {
    let chart = Value::map(
        unit.chart
            .metadata
            .iter()
            .map(|(k, v)| (k.clone(), Value::str(v)))
            .collect(),
    );
    let kube = release.kube_version.trim_start_matches('v');
    let mut parts = kube.split('.');
    let major = parts.next().unwrap_or("1").to_string();
    let minor = parts.next().unwrap_or("0").to_string();
    UnitData {
        values: unit.values.clone(),
        release: str_map(&[
            ("Name", Value::str(&release.name)),
            ("Namespace", Value::str(&release.namespace)),
            ("Service", Value::str("Helm")),
            ("Revision", Value::Int(1, None)),
            ("IsInstall", Value::Bool(true, None)),
            ("IsUpgrade", Value::Bool(false, None)),
        ]),
        chart,
        capabilities: str_map(&[
            (
                "KubeVersion",
                str_map(&[
                    ("Version", Value::str(&release.kube_version)),
                    ("GitVersion", Value::str(&release.kube_version)),
                    ("Major", Value::str(&major)),
                    ("Minor", Value::str(&minor)),
                ]),
            ),
            (
                "APIVersions",
                Value::Object(std::rc::Rc::new(ApiVersions(release.api_versions.clone()))),
            ),
            ("HelmVersion", str_map(&[("Version", Value::str("v4.2"))])),
        ]),
        files: Value::Object(std::rc::Rc::new(Files {
            files: unit.chart.files.iter().cloned().collect(),
        })),
    }
}

fn render_data(unit: &Unit<'_>, data: &UnitData, name: &str) -> Value {
    let base_path = format!("{}/templates", unit.prefix);
    str_map(&[
        ("Values", data.values.clone()),
        ("Release", data.release.clone()),
        ("Chart", data.chart.clone()),
        ("Capabilities", data.capabilities.clone()),
        (
            "Template",
            str_map(&[
                ("Name", Value::str(name)),
                ("BasePath", Value::str(&base_path)),
            ]),
        ),
        ("Files", data.files.clone()),
    ])
}
