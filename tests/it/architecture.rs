//! The module graph points one way. Each `src/<folder>` or `src/<file>.rs` is a unit with a
//! layer; a `crate::<unit>` path in a unit's code (tests excluded: a `#[cfg(test)]` module may
//! drive the whole pipeline) must name a unit of a lower layer. Units of one layer are peers
//! and must not use each other. ARCHITECTURE.md shows the same table (checked below). Inside
//! every folder, its parts use each other without a cycle, and no file is over 900 lines
//! outside its tests.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Layers, top to bottom; units on one line are peers.
const LAYERS: &[&[&str]] = &[
    &["cli"],
    &["report", "fixer"],
    &["engine"],
    &["config"],
    &["registry"],
    &["rules", "policy"],
    &["rule"],
    &["model"],
    &["repo"],
    &["diagnostic", "suppress"],
    &["yaml"],
    &["fix"],
    &["source"],
];

/// Paths off the graph: the crate root's items (`crate::VERSION`).
const ROOT_ITEMS: &[&str] = &["VERSION"];

fn layer_of(unit: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&unit))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The text of a file without its `#[cfg(test)]` items (a `mod tests;` line, an inline module
/// or function up to its matching brace) and without comments and string literals, so that
/// neither a path in a doc comment nor a brace in a string counts.
fn without_test_code(text: &str) -> String {
    let code = blank_comments_and_strings(text);
    let mut out = String::new();
    let mut rest = code.as_str();
    while let Some(i) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..i]);
        let after = &rest[i..];
        let item_end = match (after.find('{'), after.find(';')) {
            // `#[cfg(test)] mod tests;`: the module is a file of its own.
            (None, Some(semi)) => semi + 1,
            (Some(open), Some(semi)) if semi < open => semi + 1,
            (Some(open), _) => open + matching_brace(&after[open..]),
            (None, None) => after.len(),
        };
        rest = &after[item_end..];
    }
    out.push_str(rest);
    out
}

/// The length of the braced block `text` starts with, up to its matching `}`.
fn matching_brace(text: &str) -> usize {
    let mut depth = 0usize;
    for (j, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return j + 1;
                }
            }
            _ => {}
        }
    }
    text.len()
}

/// `text` with comments and the contents of string and character literals replaced by spaces
/// (line breaks kept, so line numbers stay right), and every byte that is not ASCII a space.
fn blank_comments_and_strings(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, c: u8| out.push(if c == b'\n' { b'\n' } else { b' ' });
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    out.push(b' ');
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        out.extend(b"  ");
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        out.extend(b"  ");
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        blank(&mut out, b[i]);
                        i += 1;
                    }
                }
            }
            b'r' if matches!(b.get(i + 1), Some(b'"' | b'#'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                // A raw string: r"…", r#"…"#.
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                if b.get(i + 1 + hashes) != Some(&b'"') {
                    out.push(b[i]);
                    i += 1;
                    continue;
                }
                let close: Vec<u8> = std::iter::once(b'"')
                    .chain(std::iter::repeat_n(b'#', hashes))
                    .collect();
                out.extend(std::iter::repeat_n(b' ', 2 + hashes));
                i += 2 + hashes;
                while i < b.len() && !b[i..].starts_with(&close) {
                    blank(&mut out, b[i]);
                    i += 1;
                }
                out.extend(std::iter::repeat_n(b' ', close.len().min(b.len() - i)));
                i += close.len();
            }
            b'"' => {
                out.push(b' ');
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        blank(&mut out, b[i]);
                        i += 1;
                    }
                    if i < b.len() {
                        blank(&mut out, b[i]);
                        i += 1;
                    }
                }
                out.push(b' ');
                i += 1;
            }
            // A character literal ('{', '\''), not a lifetime ('a).
            b'\'' if b.get(i + 2) == Some(&b'\'') => {
                out.extend(b"   ");
                i += 3;
            }
            b'\'' if b.get(i + 1) == Some(&b'\\') => {
                let len = b[i + 2..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .map_or(2, |p| p + 3);
                out.extend(std::iter::repeat_n(b' ', len));
                i += len;
            }
            // Only ASCII matters here: any other byte becomes a space, so the text stays ASCII.
            c => {
                out.push(if c.is_ascii() { c } else { b' ' });
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out[..out.len().min(b.len())]).into_owned()
}

/// `crate::<unit>` references of each unit.
fn edges() -> BTreeMap<String, BTreeMap<String, String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut edges: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for f in files {
        let rel = f
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let unit = match rel.split_once('/') {
            Some((dir, _)) => dir.to_string(),
            None => rel.trim_end_matches(".rs").to_string(),
        };
        // The crate roots, the binary at the top (everything is below it), and test modules
        // kept in files of their own (`tests.rs`).
        if unit == "lib" || unit == "main" || unit == "cli" || rel.ends_with("/tests.rs") {
            continue;
        }
        let text = without_test_code(&std::fs::read_to_string(&f).unwrap());
        let prefix = if unit == "cli" {
            "gitops_lint::"
        } else {
            "crate::"
        };
        for (i, _) in text.match_indices(prefix) {
            let target: String = text[i + prefix.len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if target != unit && !ROOT_ITEMS.contains(&target.as_str()) {
                let line = text[..i].lines().count();
                edges
                    .entry(unit.clone())
                    .or_default()
                    .entry(target)
                    .or_insert(format!("{rel}:{line}"));
            }
        }
    }
    edges
}

#[test]
fn modules_depend_one_way() {
    let mut wrong = Vec::new();
    for (from, targets) in edges() {
        let Some(lf) = layer_of(&from) else {
            wrong.push(format!(
                "`{from}` has no layer: add it to LAYERS and ARCHITECTURE.md"
            ));
            continue;
        };
        for (to, at) in targets {
            match layer_of(&to) {
                Some(lt) if lt > lf => {}
                Some(_) => wrong.push(format!("{at}: `{from}` uses `{to}`, which is not below it")),
                None => wrong.push(format!("{at}: `{from}` uses `{to}`, which has no layer")),
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "the module graph points the wrong way:\n{}",
        wrong.join("\n")
    );
}

/// The diagram in ARCHITECTURE.md, generated from [`LAYERS`].
fn diagram() -> String {
    let mut out = String::from("```\n");
    for (i, layer) in LAYERS.iter().enumerate() {
        if i > 0 {
            out.push_str("  ↓\n");
        }
        out.push_str(&layer.join("   "));
        out.push('\n');
    }
    out.push_str("```\n");
    out
}

#[test]
fn architecture_md_shows_the_layers() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let (begin, end) = (
        "<!-- layers: generated by tests/it/architecture.rs -->\n",
        "<!-- /layers -->",
    );
    let start = text
        .find(begin)
        .expect("ARCHITECTURE.md lacks the layers marker")
        + begin.len();
    let stop = start
        + text[start..]
            .find(end)
            .expect("ARCHITECTURE.md lacks the end marker");
    let want = diagram();
    if text[start..stop] != want {
        if crate::support::bless() {
            let new = format!("{}{}{}", &text[..start], want, &text[stop..]);
            std::fs::write(&path, new).unwrap();
        } else {
            panic!("ARCHITECTURE.md's layer diagram is stale: run `BLESS=1 cargo test`\n{want}");
        }
    }
}

/// Rules stay small: what two rules need is model code.
#[test]
fn no_rule_file_is_over_600_lines() {
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src/rules"),
        &mut files,
    );
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(f).unwrap().lines().count();
            (n > 600).then(|| format!("{}: {n} lines", f.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "move model code to src/model/:\n{}",
        long.join("\n")
    );
}

/// A file's module path: `src/engine/load.rs` is `engine::load`, `src/engine/mod.rs` is `engine`.
fn module_of(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_string)
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The absolute module paths that `code` names through `crate::`, `super::` and `self::`,
/// `use` groups expanded (`use super::{load::Keep, Error}` names `…::load::Keep` and `…::Error`),
/// each with its line.
fn paths_named(code: &str, module: &[String]) -> Vec<(Vec<String>, usize)> {
    let b = code.as_bytes();
    let ident_at = |i: usize| -> (String, usize) {
        let len = b[i..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
            .count();
        (code[i..i + len].to_string(), i + len)
    };
    let skip_ws = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    };
    // Parses a use tree at `i` below `prefix`; returns the paths and where it ends.
    fn tree(
        code: &str,
        mut i: usize,
        prefix: Vec<String>,
        ident_at: &dyn Fn(usize) -> (String, usize),
        skip_ws: &dyn Fn(usize) -> usize,
        out: &mut Vec<Vec<String>>,
    ) -> usize {
        let b = code.as_bytes();
        let mut path = prefix;
        loop {
            i = skip_ws(i);
            if i < b.len() && b[i] == b'{' {
                i += 1;
                loop {
                    i = skip_ws(i);
                    if i >= b.len() {
                        return i;
                    }
                    if b[i] == b'}' {
                        return i + 1;
                    }
                    if b[i] == b',' {
                        i += 1;
                        continue;
                    }
                    let before = i;
                    i = tree(code, i, path.clone(), ident_at, skip_ws, out);
                    if i == before {
                        i += 1;
                    }
                }
            }
            let (id, next) = ident_at(i);
            if id.is_empty() {
                out.push(path);
                return i;
            }
            if id != "self" {
                path.push(id);
            }
            i = skip_ws(next);
            if code[i..].starts_with("::") {
                i += 2;
            } else {
                if code[i..].starts_with("as ") {
                    i = ident_at(skip_ws(i + 3)).1;
                }
                out.push(path);
                return i;
            }
        }
    }
    let mut found = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let boundary =
            i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b':');
        let (id, next) = ident_at(i);
        if id.is_empty() {
            i += 1;
            continue;
        }
        if boundary
            && matches!(id.as_str(), "crate" | "super" | "self")
            && code[next..].starts_with("::")
        {
            let mut base: Vec<String> = match id.as_str() {
                "crate" => Vec::new(),
                "self" => module.to_vec(),
                _ => {
                    let mut m = module.to_vec();
                    m.pop();
                    m
                }
            };
            let mut j = next + 2;
            // `super::super::`
            while code[j..].starts_with("super::") {
                base.pop();
                j += "super::".len();
            }
            let mut out = Vec::new();
            let end = tree(code, j, base, &ident_at, &skip_ws, &mut out);
            let line = code[..i].lines().count().max(1);
            found.extend(out.into_iter().map(|p| (p, line)));
            i = end.max(next);
        } else {
            i = next;
        }
    }
    found
}

/// Cycles tolerated for now: `(folder, one part, the other)`. The test fails when another
/// cycle appears, and when one of these is gone (remove it here). The house restructuring
/// (issue #31) removed the last ones.
const KNOWN_CYCLES: &[(&str, &str, &str)] = &[];

/// Every folder's sub-units (its files and folders) use each other without a cycle, at every
/// level of `src/`: what a folder's parts need of each other points one way, as the layers
/// do between folders. A folder's `mod.rs` is the folder itself, not one of its parts.
#[test]
fn no_import_cycle_inside_a_folder() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    // edges[folder][from] = {to: where}
    let mut edges: BTreeMap<Vec<String>, BTreeMap<String, BTreeMap<String, String>>> =
        BTreeMap::new();
    let mut children: BTreeMap<Vec<String>, std::collections::BTreeSet<String>> = BTreeMap::new();
    let mods: Vec<(String, Vec<String>)> = files
        .iter()
        .map(|f| {
            let rel = f
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let m = module_of(&rel);
            (rel, m)
        })
        .collect();
    for (_, m) in &mods {
        for depth in 0..m.len() {
            children
                .entry(m[..depth].to_vec())
                .or_default()
                .insert(m[depth].clone());
        }
    }
    for (f, (rel, module)) in files.iter().zip(&mods) {
        if rel.ends_with("/tests.rs") || rel.ends_with("tests.rs") && rel.contains("/tests/") {
            continue;
        }
        let code = without_test_code(&std::fs::read_to_string(f).unwrap());
        for (path, line) in paths_named(&code, module) {
            // The deepest folder holding both this file's and the path's sub-units.
            let common = module.iter().zip(&path).take_while(|(a, b)| a == b).count();
            if common >= module.len() || common >= path.len() {
                continue; // the folder itself or one of its own parts
            }
            let folder = module[..common].to_vec();
            let (from, to) = (&module[common], &path[common]);
            if !children.get(&folder).is_some_and(|c| c.contains(to)) {
                continue; // an item of the folder's `mod.rs`, not a sub-unit
            }
            edges
                .entry(folder)
                .or_default()
                .entry(from.clone())
                .or_default()
                .entry(to.clone())
                .or_insert(format!("src/{rel}:{line}"));
        }
    }
    let mut cycles = Vec::new();
    let mut known_seen = std::collections::BTreeSet::new();
    for (folder, graph) in &edges {
        let name = if folder.is_empty() {
            "src".to_string()
        } else {
            format!("src/{}", folder.join("/"))
        };
        for start in graph.keys() {
            // The shortest path from a successor of `start` back to `start`.
            let mut seen = std::collections::BTreeSet::new();
            let mut queue: std::collections::VecDeque<Vec<String>> = graph[start]
                .keys()
                .map(|n| vec![start.clone(), n.clone()])
                .collect();
            while let Some(trail) = queue.pop_front() {
                let node = trail.last().unwrap().clone();
                if node == *start {
                    let mut parts: Vec<&String> = trail[..trail.len() - 1].iter().collect();
                    parts.sort();
                    let known = KNOWN_CYCLES.iter().find(|(f, a, b)| {
                        *f == name && parts.len() == 2 && parts[0] == a && parts[1] == b
                    });
                    match known {
                        Some(k) => {
                            known_seen.insert(*k);
                        }
                        None => {
                            let at: Vec<String> = trail
                                .windows(2)
                                .map(|w| graph[&w[0]][&w[1]].clone())
                                .collect();
                            cycles.push(format!(
                                "{name}: {} ({})",
                                trail.join(" → "),
                                at.join(", ")
                            ));
                        }
                    }
                    break;
                }
                if !seen.insert(node.clone()) {
                    continue;
                }
                for next in graph.get(&node).into_iter().flat_map(BTreeMap::keys) {
                    let mut t = trail.clone();
                    t.push(next.clone());
                    queue.push_back(t);
                }
            }
        }
    }
    cycles.sort();
    cycles.dedup();
    assert!(
        cycles.is_empty(),
        "import cycles between a folder's parts:\n{}",
        cycles.join("\n")
    );
    let gone: Vec<String> = KNOWN_CYCLES
        .iter()
        .filter(|k| !known_seen.contains(*k))
        .map(|(f, a, b)| format!("{f}: {a} ↔ {b}"))
        .collect();
    assert!(
        gone.is_empty(),
        "these known cycles are gone: remove them from KNOWN_CYCLES\n{}",
        gone.join("\n")
    );
}

/// Files over [`MAX_FILE_LINES`] today, each with the count it must not exceed: the house
/// restructuring (issue #31) splits them. A file that shrinks under the limit leaves the list.
const LONG_FILES: &[(&str, usize)] = &[];

/// Lines of a file of `src/` outside its test modules.
const MAX_FILE_LINES: usize = 900;

/// No file of `src/` or of the template crate's `src/` is over 900 lines outside its test
/// modules (a room doing one job).
#[test]
fn no_source_file_is_over_900_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("crates/gotmpl/src"), &mut files);
    let src = root.join("src");
    let mut wrong = Vec::new();
    for f in files {
        let Ok(rel) = f.strip_prefix(&src) else {
            let n = without_test_code(&std::fs::read_to_string(&f).unwrap())
                .trim_end()
                .lines()
                .count();
            if n > MAX_FILE_LINES {
                let rel = f.strip_prefix(root).unwrap().display().to_string();
                wrong.push(format!("{rel}: {n} lines (at most {MAX_FILE_LINES})"));
            }
            continue;
        };
        let rel = rel.to_string_lossy().replace('\\', "/");
        if rel.ends_with("tests.rs") {
            continue;
        }
        let n = without_test_code(&std::fs::read_to_string(&f).unwrap())
            .trim_end()
            .lines()
            .count();
        let limit = LONG_FILES
            .iter()
            .find(|(p, _)| *p == rel)
            .map_or(MAX_FILE_LINES, |(_, n)| *n);
        if n > limit {
            wrong.push(format!("src/{rel}: {n} lines (at most {limit})"));
        } else if limit > MAX_FILE_LINES && n <= MAX_FILE_LINES {
            wrong.push(format!("src/{rel}: {n} lines: remove it from LONG_FILES"));
        }
    }
    assert!(wrong.is_empty(), "split these files:\n{}", wrong.join("\n"));
}
