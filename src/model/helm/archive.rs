//! `charts/*.tgz` archives: unpacked within what a chart's archives may unpack to together, and
//! read into a [`Chart`] (nested archives and folders included).

use std::cell::Cell;
use std::collections::BTreeMap;
use std::path::Path;

use super::chart::{
    Chart, MAX_SUBCHART_DEPTH, MAX_TEMPLATE_BYTES, MAX_TEMPLATE_FILES, UnreadSubchart,
    is_chart_metadata, metadata_and_dependencies,
};
use super::values::Values;
use crate::source::Span;
use crate::source::fs::{NOT_REGULAR, Reach, Root};
use crate::yaml;

/// A `charts/*.tgz` archive's size, and what all archives of one chart may unpack to together,
/// nested ones included (a 1.5 MB archive can hold a thousand archives of 60 MB each).
const MAX_ARCHIVE_BYTES: u64 = 8 << 20;
pub(super) const MAX_ARCHIVE_UNPACKED: u64 = 64 << 20;

/// Reads a `.tgz` chart archive through the confined layer (a regular file inside the root, at
/// most [`MAX_ARCHIVE_BYTES`]): its regular files, the top folder stripped as Helm does
/// (`sub/templates/x.yaml` → `templates/x.yaml`); paths that climb or are absolute are skipped.
/// What it unpacks to is taken from `unpacked`, what the chart's archives may still unpack to.
pub(super) fn read_archive_file(
    root: &Root,
    path: &Path,
    unpacked: &Cell<u64>,
) -> Result<Vec<(String, Vec<u8>)>, String> {
    let bytes = root
        .read(path, Reach::Root, MAX_ARCHIVE_BYTES)
        .map_err(|e| {
            if e.over_limit() {
                format!("larger than {MAX_ARCHIVE_BYTES} bytes")
            } else if e.reason == NOT_REGULAR {
                "not a regular file".into()
            } else {
                e.reason
            }
        })?;
    read_archive(&bytes, unpacked)
}

/// What a chart's archives may unpack to, spent as they are read: reading stops with an error
/// once nothing is left.
struct Unpacking<'a, R> {
    inner: R,
    left: &'a Cell<u64>,
}

impl<R: std::io::Read> std::io::Read for Unpacking<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.left.get();
        if left == 0 {
            return Err(std::io::Error::other(unpacked_too_much()));
        }
        let cap = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..cap])?;
        self.left.set(left - n as u64);
        Ok(n)
    }
}

fn unpacked_too_much() -> String {
    format!(
        "the chart's archives unpack to more than {} MiB",
        MAX_ARCHIVE_UNPACKED >> 20
    )
}

pub(super) fn read_archive(
    bytes: &[u8],
    unpacked: &Cell<u64>,
) -> Result<Vec<(String, Vec<u8>)>, String> {
    use std::io::Read;
    let reader = Unpacking {
        inner: flate2::read::GzDecoder::new(bytes),
        left: unpacked,
    };
    let mut archive = tar::Archive::new(reader);
    let mut out = Vec::new();
    let bad = |e: std::io::Error| {
        if unpacked.get() == 0 {
            unpacked_too_much()
        } else {
            format!("not a readable chart archive: {e}")
        }
    };
    for entry in archive.entries().map_err(bad)? {
        let entry = entry.map_err(bad)?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let name = match std::str::from_utf8(&entry.path_bytes()) {
            Ok(n) => n.to_string(),
            Err(_) => continue,
        };
        let parts: Vec<&str> = name
            .split('/')
            .filter(|p| !p.is_empty() && *p != ".")
            .collect();
        if name.starts_with('/') || parts.contains(&"..") || parts.len() < 2 {
            continue;
        }
        let rel = parts[1..].join("/");
        let size = entry.size();
        if size > MAX_TEMPLATE_BYTES {
            return Err(format!("{rel} is larger than {MAX_TEMPLATE_BYTES} bytes"));
        }
        if out.len() >= MAX_TEMPLATE_FILES {
            return Err(format!("more than {MAX_TEMPLATE_FILES} files"));
        }
        let mut buf = Vec::new();
        entry
            .take(MAX_TEMPLATE_BYTES + 1)
            .read_to_end(&mut buf)
            .map_err(bad)?;
        out.push((rel, buf));
    }
    Ok(out)
}

/// A chart from an archive's files (chart-relative paths), in `dir/<its name>`. Its values
/// point at `anchor`: the archive's text is not a file of the repository. Archives in it
/// unpack from `unpacked`.
pub(super) fn from_files(
    dir: &str,
    files: Vec<(String, Vec<u8>)>,
    anchor: Span,
    depth: usize,
    unpacked: &Cell<u64>,
) -> Result<Chart, String> {
    if depth > MAX_SUBCHART_DEPTH {
        return Err("subcharts nested too deeply".into());
    }
    let text = |name: &str| {
        files
            .iter()
            .find(|(p, _)| p == name)
            .and_then(|(_, b)| std::str::from_utf8(b).ok())
    };
    let parse = |t: &str| {
        yaml::parse(anchor.file, t)
            .docs
            .into_iter()
            .next()
            .map(|d| d.root)
    };
    let root = text("Chart.yaml")
        .and_then(parse)
        .ok_or("the archive has no Chart.yaml")?;
    let name = root
        .get_str("name")
        .ok_or("the archive's Chart.yaml has no name")?
        .to_string();
    // Named by its chart, as Helm names a subchart's templates.
    let dir = format!("{dir}/{name}");
    let defaults = text("values.yaml")
        .and_then(parse)
        .map_or(Values::empty_map(), |r| {
            match Values::from_node(&r, Some(anchor)) {
                Values::Null => Values::empty_map(),
                v => v,
            }
        });
    let mut templates = Vec::new();
    let mut crds = Vec::new();
    let mut other = Vec::new();
    let mut nested: BTreeMap<String, Vec<(String, Vec<u8>)>> = BTreeMap::new();
    let mut subcharts = Vec::new();
    let mut unread = Vec::new();
    let mut not_read = |path: String, why: String| {
        unread.push(UnreadSubchart {
            path,
            why,
            at: anchor,
        });
    };
    for (p, bytes) in &files {
        if let Some(rest) = p.strip_prefix("charts/") {
            match rest.split_once('/') {
                // A folder subchart inside the archive: `charts/<sub>/x` → `<sub>/x`, the shape
                // of an archive's entries.
                Some((sub, _)) => nested
                    .entry(sub.to_string())
                    .or_default()
                    .push((rest.to_string(), bytes.clone())),
                None if rest.ends_with(".tgz") => {
                    let at = format!("{dir}/charts/{rest}");
                    match read_archive(bytes, unpacked)
                        .and_then(|f| from_files(&at, f, anchor, depth + 1, unpacked))
                    {
                        Ok(c) => subcharts.push(c),
                        Err(why) => not_read(at, why),
                    }
                }
                None => {}
            }
            continue;
        }
        let Ok(t) = String::from_utf8(bytes.clone()) else {
            continue;
        };
        if p.starts_with("templates/") {
            templates.push((p.clone(), t));
        } else if p.starts_with("crds/") {
            crds.push((p.clone(), t));
        } else if !is_chart_metadata(p) {
            other.push((p.clone(), t));
        }
    }
    for (sub, files) in nested {
        let files = files
            .into_iter()
            .map(|(p, b)| (p.split_once('/').map_or(p.clone(), |x| x.1.to_string()), b))
            .collect();
        let at = format!("{dir}/charts");
        match from_files(&at, files, anchor, depth + 1, unpacked) {
            Ok(c) => subcharts.push(c),
            Err(why) => not_read(format!("{at}/{sub}"), why),
        }
    }
    templates.sort();
    crds.sort();
    other.sort();
    subcharts.sort_by(|a: &Chart, b: &Chart| a.dir.cmp(&b.dir));
    let (metadata, dependencies) = metadata_and_dependencies(&root, &name);
    Ok(Chart {
        dir,
        name,
        metadata,
        defaults,
        templates,
        crds,
        files: other,
        dependencies,
        subcharts,
        unread,
        builtin: None,
    })
}
