//! `--select`, `--extend-select` and `--ignore` (and the configuration's `select`,
//! `extend-select` and `ignore`): which rules report, by id or group (`argocd/`).

use gitops_lint::config;
use gitops_lint::engine::Report;
use gitops_lint::registry as rules;

#[derive(Debug, Default)]
pub struct Selection {
    select: Vec<String>,
    extend_select: Vec<String>,
    ignore: Vec<String>,
}

impl Selection {
    /// Validates the command line's selectors; an unknown one is `(message, help)`.
    pub fn new(
        select: &[String],
        extend_select: &[String],
        ignore: &[String],
    ) -> Result<Selection, (String, String)> {
        // The rules' metadata (the shipped pack compiled) only to check what was given.
        let given = !(select.is_empty() && extend_select.is_empty() && ignore.is_empty());
        let metas = if given { rules::all_meta() } else { Vec::new() };
        for (flag, list) in [
            ("--select", select),
            ("--extend-select", extend_select),
            ("--ignore", ignore),
        ] {
            for s in list {
                config::check_selector(s, &metas)
                    .map_err(|help| (format!("{flag}: unknown rule or group `{s}`"), help))?;
            }
        }
        Ok(Selection {
            select: select.to_vec(),
            extend_select: extend_select.to_vec(),
            ignore: ignore.to_vec(),
        })
    }

    /// Drops the findings of rules not selected, merged with the report's configuration: the
    /// command line's `--select` replaces the configuration's `select`; `extend-select` and
    /// `ignore` add up.
    pub fn apply(&self, report: &mut Report) {
        let config = &report.config;
        let select: Option<&[String]> = if self.select.is_empty() {
            config.select.as_deref()
        } else {
            Some(&self.select)
        };
        let extend: Vec<&String> = config
            .extend_select
            .iter()
            .chain(&self.extend_select)
            .collect();
        let ignore: Vec<&String> = config.ignore.iter().chain(&self.ignore).collect();
        if select.is_none() && ignore.is_empty() {
            return;
        }
        let matches = |sel: &String, rule: &str| config::selector_matches(sel, rule);
        let keep = |rule: &str| {
            let selected = select.is_none_or(|list| {
                list.iter()
                    .chain(extend.iter().copied())
                    .any(|s| matches(s, rule))
            });
            selected && !ignore.iter().any(|s| matches(s, rule))
        };
        let before = report.diagnostics.len();
        report.diagnostics.retain(|d| keep(&d.rule));
        if report.diagnostics.len() != before {
            report.recount();
        }
    }
}
