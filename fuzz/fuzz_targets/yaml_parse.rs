//! The YAML layer on arbitrary text: never panics; every node, key and error span lies inside
//! the text on UTF-8 boundaries; the streaming validator agrees with the tree builder on
//! syntax errors.
#![no_main]

use gitops_lint::source::{FileId, Span};
use gitops_lint::yaml::{self, YamlErrorKind};
use libfuzzer_sys::fuzz_target;

fn check_span(text: &str, s: Span) {
    assert!(s.start <= s.end, "{s:?}");
    assert!((s.end as usize) <= text.len(), "{s:?} past {}", text.len());
    assert!(text.is_char_boundary(s.start as usize) && text.is_char_boundary(s.end as usize), "{s:?}");
}

fuzz_target!(|text: &str| {
    let parsed = yaml::parse(FileId(0), text);
    for e in &parsed.errors {
        check_span(text, e.span);
    }
    for d in &parsed.docs {
        check_span(text, d.span);
        for n in d.root.descendants() {
            check_span(text, n.span);
        }
        let _ = d.root.to_json();
    }
    let tree_syntax = parsed.errors.iter().filter(|e| e.kind == YamlErrorKind::Syntax).count();
    let stream_syntax = yaml::validate_stream(FileId(0), text).iter().filter(|e| e.kind == YamlErrorKind::Syntax).count();
    // The tree builder also reports aliases to unknown anchors as syntax errors.
    assert!(stream_syntax <= tree_syntax, "stream {stream_syntax} > tree {tree_syntax}");
});
