//! The Go template engine on arbitrary templates and values (`template\n---\nvalues`): parsing and
//! rendering never panic, stay within their budget, and every output segment lies inside the
//! output on UTF-8 boundaries, sorted and without overlap.
#![no_main]

use gotmpl::{Limits, Templates, Value};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &str| {
    // Maps that `set` makes hold themselves are freed with the input, as the linter does.
    let _maps = gotmpl::MapScope::new();
    let (template, values) = input.split_once("\n---\n").unwrap_or((input, ""));
    let values = gotmpl::yaml::from_yaml(values).unwrap_or(Value::Nil);
    let data = Value::map([("Values".to_string(), values)].into_iter().collect());
    let mut set = Templates::helm();
    if set.add("t.yaml", template).is_err() {
        return;
    }
    let limits = Limits {
        steps: 20_000,
        depth: 50,
        output_bytes: 1 << 16,
        built_bytes: 1 << 20,
    };
    if let Ok(out) = set.render("t.yaml", &data, &limits) {
        let mut at = 0;
        for (r, _) in &out.segments {
            assert!(r.start >= at && r.start < r.end && r.end <= out.text.len());
            assert!(out.text.is_char_boundary(r.start) && out.text.is_char_boundary(r.end));
            at = r.end;
        }
    }
});
