//! The Go template engine on templates built from its functions and its recursion: each input
//! byte picks the next piece of a small grammar (pipelines of Sprig and Helm functions,
//! variables, `set` on shared maps, `range`, `if`, nested parentheses, a `define` that may
//! include itself, `tpl`), so most inputs parse and reach the evaluator. Rendering never
//! panics or overflows the stack, stays within its budget, and every output segment lies
//! inside the output on UTF-8 boundaries, sorted and without overlap.
#![no_main]

use gotmpl::{Limits, Templates, Value};
use libfuzzer_sys::fuzz_target;

/// Functions with their first arguments: the value piped or given last completes them.
const FUNCS: &[&str] = &[
    "printf \"%s%s\" \"a\"",
    "printf \"%v\"",
    "print",
    "repeat 3",
    "indent 2",
    "nindent 2",
    "replace \"a\" \"bb\"",
    "join \",\"",
    "list 1",
    "list",
    "dict \"k\"",
    "toJson",
    "toYaml",
    "fromYaml",
    "fromJson",
    "deepCopy",
    "quote",
    "upper",
    "b64enc",
    "append (list 1)",
    "uniq",
    "has 1",
    "default \"x\"",
    "trunc 5",
    "splitList \",\"",
    "toString",
    "keys",
    "first",
    "concat (list 1)",
    "include \"d\"",
    "tpl \"{{ . }}\"",
    "len",
    "kindOf",
    "empty",
    "merge (dict \"a\" 1)",
];

/// Reads the input byte by byte; past its end every choice is 0.
struct Choices<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Choices<'_> {
    fn pick(&mut self, n: usize) -> usize {
        let b = self.bytes.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        usize::from(b) % n
    }

    fn done(&self) -> bool {
        self.at >= self.bytes.len()
    }
}

fn expr(c: &mut Choices<'_>, depth: usize, out: &mut String) {
    let leaf = depth > 6 || c.done();
    match if leaf { c.pick(5) } else { c.pick(9) } {
        0 => out.push_str("\"ab\\nc\""),
        1 => out.push_str(&c.pick(100).to_string()),
        2 => out.push_str(".Values.s"),
        3 => out.push_str("$d"),
        4 => out.push_str("$l"),
        5 | 6 => {
            out.push('(');
            out.push_str(FUNCS[c.pick(FUNCS.len())]);
            out.push(' ');
            expr(c, depth + 1, out);
            out.push(')');
        }
        7 => {
            out.push('(');
            expr(c, depth + 1, out);
            out.push_str(" | ");
            out.push_str(FUNCS[c.pick(FUNCS.len())]);
            out.push(')');
        }
        _ => {
            // Parentheses nested as deep as the next byte says.
            let n = c.pick(64);
            out.push_str(&"(".repeat(n));
            expr(c, depth + 1, out);
            out.push_str(&")".repeat(n));
        }
    }
}

fn statements(c: &mut Choices<'_>, depth: usize, out: &mut String) {
    let n = 1 + c.pick(4);
    for _ in 0..n {
        if c.done() {
            return;
        }
        match c.pick(if depth > 4 { 5 } else { 8 }) {
            0 => {
                out.push_str("{{ ");
                expr(c, 0, out);
                out.push_str(" }}");
            }
            1 => {
                out.push_str("{{ $l = list $l ");
                expr(c, 0, out);
                out.push_str(" }}");
            }
            2 => {
                out.push_str("{{ $_ := set $d \"k\" ");
                expr(c, 0, out);
                out.push_str(" }}");
            }
            3 => out.push_str("{{ $_ := set $d \"me\" $d }}"),
            4 => {
                out.push_str("{{ include \"d\" ");
                expr(c, 0, out);
                out.push_str(" }}");
            }
            5 => {
                out.push_str(&format!("{{{{ range until {} }}}}", c.pick(50)));
                statements(c, depth + 1, out);
                out.push_str("{{ end }}");
            }
            6 => {
                out.push_str("{{ if ");
                expr(c, 0, out);
                out.push_str(" }}");
                statements(c, depth + 1, out);
                out.push_str("{{ else }}");
                statements(c, depth + 1, out);
                out.push_str("{{ end }}");
            }
            _ => {
                out.push_str("{{ with ");
                expr(c, 0, out);
                out.push_str(" }}");
                statements(c, depth + 1, out);
                out.push_str("{{ end }}");
            }
        }
    }
}

fuzz_target!(|bytes: &[u8]| {
    // Maps that `set` makes hold themselves are freed with the input, as the linter does.
    let _maps = gotmpl::MapScope::new();
    let mut c = Choices { bytes, at: 0 };
    // `d` may include itself: recursion ends at the depth limit or on the byte stream's end.
    let mut define = String::from("{{ define \"d\" }}{{ $d := dict \"a\" 1 }}{{ $l := list 1 }}");
    statements(&mut c, 3, &mut define);
    define.push_str("{{ end }}");
    let mut body = String::from("{{ $d := dict \"a\" 1 }}{{ $l := list 1 }}");
    statements(&mut c, 0, &mut body);
    let mut set = Templates::helm();
    if set.add("t.yaml", &format!("{define}{body}")).is_err() {
        return;
    }
    let values = gotmpl::yaml::from_yaml("s: \"{{ .Values.s }}\"\nn: 3\n").unwrap();
    let data = Value::map([("Values".to_string(), values)].into_iter().collect());
    let limits = Limits {
        steps: 50_000,
        depth: 200,
        output_bytes: 1 << 16,
        built_bytes: 1 << 20,
    };
    if let Ok(out) = set.render("t.yaml", &data, &limits) {
        assert!(out.text.len() <= limits.output_bytes);
        let mut at = 0;
        for (r, _) in &out.segments {
            assert!(r.start >= at && r.start < r.end && r.end <= out.text.len());
            assert!(out.text.is_char_boundary(r.start) && out.text.is_char_boundary(r.end));
            at = r.end;
        }
    }
});
