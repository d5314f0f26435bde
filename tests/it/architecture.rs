//! The module graph points one way. Each `src/<folder>` or `src/<file>.rs` is a unit with a
//! layer; a `crate::<unit>` path in a unit's code (tests excluded: a `#[cfg(test)]` module may
//! drive the whole pipeline) must name a unit of a lower layer. Units of one layer are peers
//! and must not use each other. ARCHITECTURE.md shows the same table (checked below).

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

/// The text of a file without its `#[cfg(test)]` items: a test module (by this crate's
/// convention, the file's last item) up to the end, another item up to its matching brace.
fn without_test_code(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..i]);
        let after = &rest[i..];
        if after["#[cfg(test)]".len()..]
            .trim_start()
            .starts_with("mod ")
        {
            return out;
        }
        let Some(open) = after.find('{') else {
            return out;
        };
        let mut depth = 0usize;
        let mut end = after.len();
        for (j, c) in after[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + j + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
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
        if std::env::var_os("UPDATE_GENERATED").is_some() {
            let new = format!("{}{}{}", &text[..start], want, &text[stop..]);
            std::fs::write(&path, new).unwrap();
        } else {
            panic!(
                "ARCHITECTURE.md's layer diagram is stale: run `UPDATE_GENERATED=1 cargo test`\n{want}"
            );
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
