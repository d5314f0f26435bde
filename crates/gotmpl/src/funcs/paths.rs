//! Sprig's path functions (slash-separated, Go's `path`), its file-path ones and URLs.

use super::*;

pub(crate) const FUNCS: &[(&str, Func)] = &[
    ("base", Func::Native(path_fn)),
    ("dir", Func::Native(path_fn)),
    ("ext", Func::Native(path_fn)),
    ("clean", Func::Native(path_fn)),
    ("isAbs", Func::Native(path_fn)),
    ("osBase", Func::Unsupported),
    ("osDir", Func::Unsupported),
    ("osExt", Func::Unsupported),
    ("osClean", Func::Unsupported),
    ("osIsAbs", Func::Unsupported),
    ("urlParse", Func::Unsupported),
    ("urlJoin", Func::Unsupported),
];

fn path_fn(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    let p = st(&a[0])?;
    match name {
        "base" => s(&path_base(p)),
        "dir" => s(&path_dir(p)),
        "ext" => {
            let base = p.rsplit('/').next().unwrap_or("");
            s(base.rfind('.').map_or("", |i| &base[i..]))
        }
        "clean" => s(&path_clean(p)),
        _ => b(p.starts_with('/')),
    }
}

fn path_clean(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            s => parts.push(s),
        }
    }
    let body = parts.join("/");
    match (rooted, body.is_empty()) {
        (true, _) => format!("/{body}"),
        (false, true) => ".".into(),
        (false, false) => body,
    }
}

fn path_base(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let t = p.trim_end_matches('/');
    if t.is_empty() {
        return "/".into();
    }
    t.rsplit('/').next().unwrap_or(t).to_string()
}

fn path_dir(p: &str) -> String {
    let i = p.rfind('/').map_or(0, |i| i + 1);
    path_clean(&p[..i])
}
