//! Byte offset → line/column on arbitrary text (CRLF, lone CR, BOM, multi-byte characters):
//! never panics, stays in range, and is monotonic.
#![no_main]

use gitops_lint::source::LineIndex;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (&str, u16, u16)| {
    let (text, a, b) = input;
    let idx = LineIndex::new(text);
    let (a, b) = (usize::from(a.min(b)), usize::from(a.max(b)));
    let la = idx.line_col(text, a);
    let lb = idx.line_col(text, b);
    assert!(la.line >= 1 && la.column >= 1);
    assert!(la.offset <= text.len() && lb.offset <= text.len());
    assert!(la.line <= idx.line_count());
    assert!((la.line, la.column) <= (lb.line, lb.column), "{la:?} {lb:?}");
    let line = la.line - 1;
    assert!(idx.line_start(line) <= la.offset.max(idx.line_start(0).min(la.offset)));
    let r = idx.line_range(text, line);
    assert!(r.start <= r.end && r.end <= text.len());
});
