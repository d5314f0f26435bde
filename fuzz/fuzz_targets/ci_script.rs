//! The CI shell-script scanner on arbitrary scripts: never panics, and every word, command and
//! insertion point it reports lies inside the script on UTF-8 boundaries.
#![no_main]

use gitops_lint::model::ci::shell;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|script: &str| {
    let ok = |i: usize| i <= script.len() && script.is_char_boundary(i);
    for cmd in shell::commands(script) {
        assert!(ok(cmd.start) && ok(cmd.end) && cmd.start <= cmd.end);
        for w in &cmd.words {
            assert!(ok(w.start) && ok(w.end));
            assert!(w.offs.iter().all(|&o| o <= script.len()));
            if let Some(a) = w.append_at {
                assert!(ok(a), "append_at {a}");
            }
        }
    }
    for step in shell::actions(script) {
        assert!(ok(step.start) && ok(step.end));
    }
});
