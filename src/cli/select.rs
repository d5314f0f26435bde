//! `--select`, `--extend-select` and `--ignore`: which rules run and report, by id or group
//! (`argocd/`). The engine lays them over the configuration's (`config::Selection`).

use gitops_lint::config;
use gitops_lint::registry as rules;

/// Validates the command line's selectors; an unknown one is `(message, help)`.
pub fn validate(
    select: &[String],
    extend_select: &[String],
    ignore: &[String],
) -> Result<config::Selection, (String, String)> {
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
    Ok(config::Selection {
        select: select.to_vec(),
        extend_select: extend_select.to_vec(),
        ignore: ignore.to_vec(),
    })
}
