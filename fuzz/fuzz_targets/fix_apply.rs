//! Fixes on arbitrary repositories of one file: the engine never panics; every finding's fix
//! applies; a text that parsed still parses after the safe fixes; and after fixing until
//! stable, no finding with a fix is reported again.
#![no_main]

use gitops_lint::config::Config;
use gitops_lint::engine::check_texts;
use gitops_lint::fix::{self, Applicability, Fix};
use gitops_lint::source::FileId;
use gitops_lint::yaml::{self, YamlErrorKind};
use libfuzzer_sys::fuzz_target;

fn parses(text: &str) -> bool {
    !yaml::parse(FileId(0), text).errors.iter().any(|e| e.kind == YamlErrorKind::Syntax)
}

fuzz_target!(|input: (bool, &str)| {
    let (ci, text) = input;
    let name = if ci { ".gitlab-ci.yml" } else { "app.yaml" };
    let mut current = text.to_string();
    for _pass in 0..10 {
        let report = check_texts(&[(name, &current)], Config::default());
        let fixes: Vec<&Fix> = report
            .diagnostics
            .iter()
            .filter_map(|d| d.fix.as_ref())
            .filter(|f| f.applicability == Applicability::Safe)
            .collect();
        for f in &fixes {
            for e in &f.edits {
                assert!((e.span.end as usize) <= current.len() && current.is_char_boundary(e.span.start as usize) && current.is_char_boundary(e.span.end as usize));
            }
        }
        if fixes.is_empty() {
            return;
        }
        let (next, applied) = fix::apply_fixes(&current, &fixes);
        assert!(!applied.is_empty());
        if parses(&current) {
            assert!(parses(&next), "a safe fix broke the file:\n{current}\n---\n{next}");
        } else {
            return;
        }
        if next == current {
            return;
        }
        current = next;
    }
    panic!("safe fixes did not converge in 10 passes:\n{text}");
});
