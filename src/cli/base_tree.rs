//! `diff`'s base revision read from git objects: what it holds that the working tree does not
//! (`git diff --raw` against the working tree, the untracked files, the base texts through one
//! `git cat-file --batch`), for [`engine::diff::run_against`]. When the change touches what
//! only a checkout reproduces, the caller checks the base out instead ([`super::new_since`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use gitops_lint::engine::diff::BaseChanges;
use gitops_lint::source::walk::is_yaml_name;

use super::new_since::{collect, git, git_bytes, git_stdin, spawn};

/// Why the base is checked out rather than read from git objects.
pub(crate) type Checkout = String;

fn utf8(bytes: &[u8]) -> Option<&str> {
    std::str::from_utf8(bytes).ok()
}

/// The folder of a root-relative path (`""` at the root).
fn folder(rel: &str) -> &str {
    rel.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// Whether `rel` is in a chart folder at head: a folder above it holds `Chart.yaml`.
fn in_chart(root: &Path, rel: &str) -> bool {
    let mut dir = folder(rel);
    loop {
        let d = root.join(dir);
        if d.join("Chart.yaml").is_file() || d.join("Chart.yml").is_file() {
            return true;
        }
        if dir.is_empty() {
            return false;
        }
        dir = folder(dir);
    }
}

/// Whether `rel` is under the `templates/` folder of a chart (a Helm template, not YAML the
/// walk reads).
fn chart_template(root: &Path, rel: &str) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    (0..parts.len().saturating_sub(1)).any(|i| {
        parts[i] == "templates" && {
            let chart = root.join(parts[..i].join("/"));
            chart.join("Chart.yaml").is_file() || chart.join("Chart.yml").is_file()
        }
    })
}

/// Files whose change only a checkout reproduces: ignore and attribute files, and the
/// configuration (the base's would be read from it).
fn is_special(name: &str) -> bool {
    matches!(name, ".gitignore" | ".ignore" | ".gitattributes")
        || gitops_lint::config::FILE_NAMES.contains(&name)
}

/// What the working tree changed since the base, as git sees it.
pub(crate) struct Base {
    /// Every path the change touched, root-relative: changed, added, deleted or untracked,
    /// whatever the file (a kustomize generator's input too), for the Applications it affects.
    pub(crate) touched: Vec<String>,
    /// The base as changes to the working tree, or why it must be checked out.
    pub(crate) changes: Result<BaseChanges, Checkout>,
}

/// The base revision `commit` as changes to the working tree under `root`, or why it must be
/// checked out: a link, submodule or file type changed, a file the walk does not read (a
/// kustomize generator's input, a chart archive) or an ignore, attribute or configuration
/// file changed, a chart's files were added or removed, a base text is not UTF-8, binary or
/// over the size limit, or git converts texts on checkout.
pub(crate) fn changes(root: &Path, commit: &str) -> Result<Base, String> {
    // Untracked files are absent at the base; listed while `git diff` runs.
    let untracked = spawn(
        root,
        &[
            "-c",
            "core.excludesFile=/dev/null",
            "ls-files",
            "-z",
            "--others",
            "--exclude-standard",
        ],
    )?;
    let raw = git_bytes(
        root,
        &[
            "diff",
            "--raw",
            "-z",
            "--relative",
            "--no-renames",
            "--no-abbrev",
            "--ignore-submodules=none",
            commit,
            "--",
        ],
    )?;
    let untracked = collect(untracked)?;
    let fields = |bytes: &[u8]| -> Vec<Vec<u8>> {
        bytes
            .split(|b| *b == 0)
            .filter(|f| !f.is_empty())
            .map(<[u8]>::to_vec)
            .collect()
    };
    let (raw, untracked) = (fields(&raw), fields(&untracked));
    let touched = raw
        .iter()
        .skip(1)
        .step_by(2)
        .chain(&untracked)
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    Ok(Base {
        touched,
        // A git command that fails here leaves the checkout, not the list of touched paths.
        changes: classify(root, commit, &raw, &untracked).unwrap_or_else(Err),
    })
}

/// [`changes`] from `git diff --raw -z`'s fields and the untracked files.
fn classify(
    root: &Path,
    commit: &str,
    raw: &[Vec<u8>],
    untracked: &[Vec<u8>],
) -> Result<Result<BaseChanges, Checkout>, String> {
    let prefix = git(root, &["rev-parse", "--show-prefix"])?;
    if !prefix.is_empty()
        && git(
            root,
            &[
                "cat-file",
                "-e",
                &format!("{commit}:{}", prefix.trim_end_matches('/')),
            ],
        )
        .is_err()
    {
        return Ok(Err("the root did not exist at the base".into()));
    }
    for key in ["core.autocrlf", "core.eol"] {
        let value = git(root, &["config", "--get", key]).unwrap_or_default();
        if matches!(value.as_str(), "true" | "crlf") {
            return Ok(Err(format!("`{key}` converts texts on checkout")));
        }
    }
    let mut out = BaseChanges::default();
    // Paths whose base text to read: modified (true) or deleted (false).
    let mut texts: Vec<(String, bool)> = Vec::new();
    for pair in raw.chunks(2) {
        let [meta, path] = pair else { break };
        let (Some(meta), Some(rel)) = (utf8(meta), utf8(path)) else {
            return Ok(Err("a changed path is not UTF-8".into()));
        };
        let rel = rel.to_string();
        let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        let [old_mode, new_mode, _, _, status] = parts[..] else {
            return Ok(Err(format!("unexpected `git diff --raw` line `{meta}`")));
        };
        let regular = |m: &str| matches!(m, "100644" | "100755" | "000000");
        if !regular(old_mode) || !regular(new_mode) {
            return Ok(Err(format!("`{rel}` is a link or a submodule")));
        }
        let name = rel.rsplit('/').next().unwrap_or(&rel);
        if is_special(name) {
            return Ok(Err(format!("`{rel}` changed")));
        }
        let template = chart_template(root, &rel);
        if !template && !is_yaml_name(name) {
            return Ok(Err(format!("`{rel}` is not a file the walk reads")));
        }
        match status {
            "M" => texts.push((rel, true)),
            "A" | "D" if template || matches!(name, "Chart.yaml" | "Chart.yml") => {
                return Ok(Err(format!("a chart's file `{rel}` was added or removed")));
            }
            "A" | "D" if in_chart(root, &rel) => {
                return Ok(Err(format!("a chart's file `{rel}` was added or removed")));
            }
            "A" => {
                out.added.insert(rel);
            }
            "D" => texts.push((rel, false)),
            _ => return Ok(Err(format!("`{rel}` changed as `{status}`"))),
        }
    }
    for path in untracked {
        let Some(rel) = utf8(path) else {
            return Ok(Err("an untracked path is not UTF-8".into()));
        };
        let rel = rel.to_string();
        let name = rel.rsplit('/').next().unwrap_or(&rel);
        if is_special(name)
            || !is_yaml_name(name)
            || chart_template(root, &rel)
            || in_chart(root, &rel)
        {
            return Ok(Err(format!("untracked `{rel}`")));
        }
        out.added.insert(rel);
    }
    // An added file's folder must have been there at the base: the model asks the disk
    // whether an Application's path is a folder.
    let folders: BTreeSet<&str> = out
        .added
        .iter()
        .map(|r| folder(r))
        .filter(|d| !d.is_empty())
        .collect();
    if !folders.is_empty() {
        let input: String = folders
            .iter()
            .map(|d| format!("{commit}:{prefix}{d}\n"))
            .collect();
        let checked = git_stdin(root, &["cat-file", "--batch-check"], input.into_bytes())?;
        if String::from_utf8_lossy(&checked)
            .lines()
            .any(|l| !l.contains(" tree "))
        {
            return Ok(Err("a file was added in a new folder".into()));
        }
    }
    // A deleted file `.gitignore` ignores was not read at the base, but a kustomization may
    // still read it from the disk, where only a checkout has it.
    let deleted: Vec<&str> = texts
        .iter()
        .filter(|t| !t.1)
        .map(|t| t.0.as_str())
        .collect();
    if !deleted.is_empty() {
        let input: Vec<u8> = deleted
            .iter()
            .flat_map(|d| [d.as_bytes(), b"\0"].concat())
            .collect();
        let listed = match git_stdin(
            root,
            &[
                "-c",
                "core.excludesFile=/dev/null",
                "check-ignore",
                "--no-index",
                "-z",
                "--stdin",
            ],
            input,
        ) {
            Ok(listed) => listed,
            // Exit 1 without a message: none is ignored.
            Err(e) if e.is_empty() => Vec::new(),
            Err(e) => return Ok(Err(e)),
        };
        if let Some(path) = listed.split(|b| *b == 0).find(|f| !f.is_empty()) {
            return Ok(Err(format!(
                "`{}`, deleted, is ignored",
                String::from_utf8_lossy(path)
            )));
        }
    }
    if texts.is_empty() {
        return Ok(Ok(out));
    }
    // Attributes that make a checkout differ from the blob.
    let input: Vec<u8> = texts
        .iter()
        .flat_map(|t| [t.0.as_bytes(), b"\0"].concat())
        .collect();
    let attrs = git_stdin(
        root,
        &[
            "check-attr",
            "-z",
            "--stdin",
            "filter",
            "eol",
            "ident",
            "working-tree-encoding",
        ],
        input,
    )?;
    let attrs: Vec<&[u8]> = attrs.split(|b| *b == 0).collect();
    for a in attrs.chunks(3) {
        if let [path, attr, value] = a
            && !matches!(*value, b"unspecified" | b"unset")
            && !(*attr == b"eol" && *value == b"lf")
        {
            return Ok(Err(format!(
                "`{}` has the attribute `{}`",
                String::from_utf8_lossy(path),
                String::from_utf8_lossy(attr)
            )));
        }
    }
    let input: String = texts
        .iter()
        .map(|t| format!("{commit}:{prefix}{}\n", t.0))
        .collect();
    let blobs = git_stdin(root, &["cat-file", "--batch"], input.into_bytes())?;
    let mut at = 0;
    for (rel, modified) in texts {
        let Some(end) = blobs
            .get(at..)
            .and_then(|rest| rest.iter().position(|b| *b == b'\n'))
        else {
            return Err(format!("`git cat-file` ended before `{rel}`"));
        };
        let header = String::from_utf8_lossy(&blobs[at..at + end]).into_owned();
        at += end + 1;
        let size = match header.split(' ').collect::<Vec<_>>()[..] {
            [_, "blob", size] => size.parse::<usize>().map_err(|e| e.to_string())?,
            _ => return Ok(Err(format!("`{rel}` at the base: {header}"))),
        };
        let Some(bytes) = blobs.get(at..at + size) else {
            return Err(format!("`git cat-file` cut `{rel}` short"));
        };
        at += size + 1;
        if size as u64 > gitops_lint::source::MAX_FILE_BYTES || memchr_nul(&bytes[..size.min(8192)])
        {
            return Ok(Err(format!("`{rel}` at the base is binary or too large")));
        }
        let Ok(text) = String::from_utf8(bytes.to_vec()) else {
            return Ok(Err(format!("`{rel}` at the base is not UTF-8")));
        };
        let side: &mut BTreeMap<String, String> = if modified {
            &mut out.modified
        } else {
            &mut out.deleted
        };
        side.insert(rel, text);
    }
    Ok(Ok(out))
}

fn memchr_nul(bytes: &[u8]) -> bool {
    bytes.contains(&0)
}
