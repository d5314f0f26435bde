//! Source files: discovery, reading, and byte-offset → line/column mapping.

pub mod fs;
pub mod glob;
pub mod span;
pub mod walk;

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

pub use span::{FileId, LineCol, LineIndex, Span};

/// One file of the repository, as read from disk.
///
/// The text of a file that nothing reads after parsing (a Grafana dashboard in a ConfigMap)
/// is released after the load and read again on first use: memory then follows what the
/// rules need, not the size of the repository.
#[derive(Debug)]
pub struct SourceFile {
    pub id: FileId,
    /// Path relative to the root, with `/` separators.
    pub path: String,
    on_disk: OnDisk,
    /// The text and its line index: the file's own, or shared by its clones once
    /// [`SourceFile::share`] was called.
    text: TextSlot,
    /// Length and modification time when the file was parsed, for a released text: a
    /// re-read must find the same file.
    stamp: Option<Stamp>,
    /// Set when a released text, read again, no longer matches what was parsed.
    changed: AtomicBool,
    /// Why the file could not be read as text, if it could not.
    pub unreadable: Option<String>,
}

/// Where a file is on disk: under a root its clones and the other files of the run share (a
/// path per file would be a large part of the file list at 100,000 files), or at a path of
/// its own.
#[derive(Clone, Debug)]
enum OnDisk {
    Under(Arc<Path>),
    At(Box<Path>),
}

/// A file's text (read again on first use after a release) and its line index (made on first
/// use).
#[derive(Debug, Default)]
struct Text {
    text: OnceLock<String>,
    lines: OnceLock<LineIndex>,
}

/// Owned by one file (a clone copies it), or shared by the clones of a file kept between runs
/// (the language server's parse cache), which then copy neither the text nor its line index.
#[derive(Debug)]
enum TextSlot {
    Own(Text),
    Shared(Arc<Text>),
}

impl TextSlot {
    fn get(&self) -> &Text {
        match self {
            TextSlot::Own(t) => t,
            TextSlot::Shared(t) => t,
        }
    }
}

impl Clone for TextSlot {
    fn clone(&self) -> Self {
        match self {
            TextSlot::Own(t) => TextSlot::Own(Text {
                text: t.text.clone(),
                lines: t.lines.clone(),
            }),
            TextSlot::Shared(t) => TextSlot::Shared(t.clone()),
        }
    }
}

impl Clone for SourceFile {
    fn clone(&self) -> Self {
        SourceFile {
            id: self.id,
            path: self.path.clone(),
            on_disk: self.on_disk.clone(),
            text: self.text.clone(),
            stamp: self.stamp,
            changed: AtomicBool::new(self.changed.load(Ordering::Relaxed)),
            unreadable: self.unreadable.clone(),
        }
    }
}

impl SourceFile {
    /// A file whose text stays in memory (`text` is empty when it could not be read).
    #[must_use]
    pub fn new(id: FileId, path: String, abs: PathBuf, text: String) -> Self {
        SourceFile {
            id,
            path,
            on_disk: OnDisk::At(abs.into_boxed_path()),
            text: TextSlot::Own(Text {
                text: OnceLock::from(text),
                lines: OnceLock::new(),
            }),
            stamp: None,
            changed: AtomicBool::new(false),
            unreadable: None,
        }
    }

    /// A file read from disk whose text is not kept: it is read again on first use, and must
    /// then have the length and modification time of `stamp`.
    #[must_use]
    pub fn released(id: FileId, path: String, abs: PathBuf, stamp: Stamp) -> Self {
        SourceFile {
            text: TextSlot::Own(Text::default()),
            stamp: Some(stamp),
            ..SourceFile::new(id, path, abs, String::new())
        }
    }

    /// A file that could not be read.
    #[must_use]
    pub fn unreadable(id: FileId, path: String, abs: PathBuf, reason: Option<String>) -> Self {
        SourceFile {
            unreadable: reason,
            ..SourceFile::new(id, path, abs, String::new())
        }
    }

    /// The same file, its location kept as `root` (shared) and its path when it is there.
    #[must_use]
    pub fn under(mut self, root: &Arc<Path>) -> Self {
        if let OnDisk::At(abs) = &self.on_disk
            && abs.strip_prefix(root).ok().and_then(Path::to_str) == Some(self.path.as_str())
        {
            self.on_disk = OnDisk::Under(root.clone());
        }
        self
    }

    /// The file on disk.
    #[must_use]
    pub fn abs(&self) -> Cow<'_, Path> {
        match &self.on_disk {
            OnDisk::Under(root) => Cow::Owned(root.join(&self.path)),
            OnDisk::At(abs) => Cow::Borrowed(abs),
        }
    }

    /// Drops the text from memory; it is read again from its path on first use. Only for files
    /// read from disk, whose length and modification time are recorded here.
    pub fn release_text(&mut self) {
        let Ok(meta) = std::fs::metadata(self.abs()) else {
            return;
        };
        self.release_text_read_at((meta.len(), meta.modified().ok()));
    }

    /// [`SourceFile::release_text`] with the length and modification time the file had when
    /// its text was read ([`read_text_stamped`]), which saves a lookup of the path.
    pub fn release_text_read_at(&mut self, stamp: Stamp) {
        let len = self.text.get().text.get().map_or(0, |t| t.len() as u64);
        if stamp.0 != len {
            return;
        }
        self.stamp = Some(stamp);
        self.text = TextSlot::Own(Text::default());
    }

    /// From now on, this file's clones share its text and line index instead of copying them.
    pub fn share(&mut self) {
        if let TextSlot::Own(t) = &mut self.text {
            self.text = TextSlot::Shared(Arc::new(std::mem::take(t)));
        }
    }

    /// Whether this file and `other` are clones that share one text (see
    /// [`SourceFile::share`]): then their texts are the same without reading them.
    #[must_use]
    pub fn shares_text_with(&self, other: &SourceFile) -> bool {
        match (&self.text, &other.text) {
            (TextSlot::Shared(a), TextSlot::Shared(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// The file's text; empty when it could not be read.
    #[must_use]
    pub fn text(&self) -> &str {
        self.text.get().text.get_or_init(|| {
            let Some((len, modified)) = self.stamp else {
                return String::new();
            };
            let abs = self.abs();
            let same = std::fs::metadata(&abs)
                .is_ok_and(|m| m.len() == len && m.modified().ok() == modified);
            match read_text(&abs) {
                Ok(text) if same && text.len() as u64 == len => text,
                _ => {
                    self.changed.store(true, Ordering::Relaxed);
                    String::new()
                }
            }
        })
    }

    /// True when the text was released after the load (see [`SourceFile::release_text`]).
    #[must_use]
    pub fn text_was_released(&self) -> bool {
        self.stamp.is_some()
    }

    /// True when the file changed on disk during the run after its text was released: its
    /// findings cannot be shown with their source lines.
    #[must_use]
    pub fn changed_during_run(&self) -> bool {
        self.changed.load(Ordering::Relaxed)
    }

    #[must_use]
    pub fn lines(&self) -> &LineIndex {
        self.text
            .get()
            .lines
            .get_or_init(|| LineIndex::new(self.text()))
    }

    #[must_use]
    pub fn line_col(&self, offset: usize) -> LineCol {
        self.lines().line_col(self.text(), offset)
    }

    #[must_use]
    pub fn slice(&self, span: Span) -> &str {
        self.text().get(span.range()).unwrap_or("")
    }
}

/// All files of one run, indexed by [`FileId`]: the YAML files checked, then the Helm chart
/// templates (Go templates, not YAML: never parsed or checked, but findings on rendered objects
/// point into them).
#[derive(Debug, Default)]
pub struct SourceDb {
    files: Vec<SourceFile>,
    /// Sorted by path; ids follow `files`.
    templates: Vec<SourceFile>,
    /// `files` by a hash of their path, built on the first lookup: the model looks paths up
    /// hundreds of thousands of times, and a binary search compares long common prefixes.
    by_hash: std::sync::OnceLock<rustc_hash::FxHashMap<u64, u32>>,
}

impl SourceDb {
    #[must_use]
    pub fn new(files: Vec<SourceFile>) -> Self {
        SourceDb::with_templates(files, Vec::new())
    }

    /// With chart templates, whose ids must be `files.len()`, `files.len() + 1`... in path
    /// order.
    #[must_use]
    pub fn with_templates(files: Vec<SourceFile>, templates: Vec<SourceFile>) -> Self {
        SourceDb {
            files,
            templates,
            by_hash: std::sync::OnceLock::new(),
        }
    }

    #[must_use]
    pub fn get(&self, id: FileId) -> &SourceFile {
        let i = id.0 as usize;
        match self.files.get(i) {
            Some(f) => f,
            None => &self.templates[i - self.files.len()],
        }
    }

    /// Every file, YAML files then templates (ids `0..`).
    pub fn all(&self) -> impl Iterator<Item = &SourceFile> {
        self.files.iter().chain(&self.templates)
    }

    /// Chart template files (see [`SourceDb::with_templates`]).
    #[must_use]
    pub fn templates(&self) -> &[SourceFile] {
        &self.templates
    }

    /// The template file at this repository-relative path.
    #[must_use]
    pub fn template_by_path(&self, rel: &str) -> Option<&SourceFile> {
        self.templates
            .binary_search_by(|f| f.path.as_str().cmp(rel))
            .ok()
            .map(|i| &self.templates[i])
    }

    /// Template files under a folder (`dir/...`), in path order.
    #[must_use]
    pub fn templates_under(&self, dir: &str) -> &[SourceFile] {
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let start = self
            .templates
            .partition_point(|f| f.path.as_str() < prefix.as_str());
        let len = self.templates[start..].partition_point(|f| f.path.starts_with(&prefix));
        &self.templates[start..start + len]
    }

    #[must_use]
    pub fn files(&self) -> &[SourceFile] {
        &self.files
    }

    #[must_use]
    pub fn by_path(&self, rel: &str) -> Option<&SourceFile> {
        let index = self.by_hash.get_or_init(|| {
            let mut index = rustc_hash::FxHashMap::with_capacity_and_hasher(
                self.files.len(),
                rustc_hash::FxBuildHasher,
            );
            for (i, f) in self.files.iter().enumerate() {
                // On a collision the first path keeps the slot; the others are found below.
                index
                    .entry(path_hash(&f.path))
                    .or_insert(u32::try_from(i).unwrap_or(u32::MAX));
            }
            index
        });
        // A hash no file has: no such file. The same hash and another path: a collision.
        let f = self.files.get(*index.get(&path_hash(rel))? as usize)?;
        if f.path == rel {
            return Some(f);
        }
        self.files
            .binary_search_by(|f| f.path.as_str().cmp(rel))
            .ok()
            .map(|i| &self.files[i])
    }

    #[must_use]
    pub fn text(&self, span: Span) -> &str {
        self.get(span.file).slice(span)
    }
}

fn path_hash(path: &str) -> u64 {
    use std::hash::BuildHasher;
    // Not keyed: paths come from the repository's own tree, and a collision only costs a
    // binary search.
    rustc_hash::FxBuildHasher.hash_one(path)
}

pub use fs::MAX_FILE_BYTES;

/// Reads `abs` as UTF-8 text. Binary and non-UTF-8 files give a reason instead.
pub fn read_text(abs: &Path) -> Result<String, String> {
    read_text_stamped(abs).map(|(text, _)| text)
}

/// A file's length and modification time, to tell later whether it changed.
pub type Stamp = (u64, Option<SystemTime>);

/// [`read_text`], with the file's length and modification time before the read.
pub fn read_text_stamped(abs: &Path) -> Result<(String, Stamp), String> {
    let mut bytes = Vec::new();
    let stamp = read_bytes(abs, &mut bytes)?;
    let text = String::from_utf8(bytes).map_err(|e| utf8_reason(e.utf8_error()))?;
    Ok((text, stamp))
}

/// [`read_text_stamped`] into `buffer` (cleared first), whose memory is reused from file to
/// file: most texts are dropped right after parsing, so they need no allocation of their own.
pub fn read_text_into<'b>(abs: &Path, buffer: &'b mut Vec<u8>) -> Result<(&'b str, Stamp), String> {
    buffer.clear();
    let stamp = read_bytes(abs, buffer)?;
    let text = std::str::from_utf8(buffer).map_err(utf8_reason)?;
    Ok((text, stamp))
}

fn utf8_reason(e: std::str::Utf8Error) -> String {
    format!(
        "not valid UTF-8 (invalid byte at offset {})",
        e.valid_up_to()
    )
}

/// Reads `abs` into `bytes` (empty), refusing files over [`MAX_FILE_BYTES`] and binary files.
fn read_bytes(abs: &Path, bytes: &mut Vec<u8>) -> Result<Stamp, String> {
    use std::io::Read;
    // One open, and the size from the handle: a second lookup of the path costs as much as
    // the read of a small file.
    let file = fs::open_walked(abs).map_err(|e| io_reason(&e))?;
    let meta = file.metadata().map_err(|e| io_reason(&e))?;
    if !meta.is_file() {
        // Replaced by a FIFO or a device since the walk: never read.
        return Err(fs::NOT_REGULAR.into());
    }
    let len = meta.len();
    let stamp = (len, meta.modified().ok());
    if len > MAX_FILE_BYTES {
        return Err(format!(
            "file is {len} bytes, larger than the {MAX_FILE_BYTES} byte limit"
        ));
    }
    bytes.reserve(usize::try_from(len).unwrap_or(0).saturating_add(1));
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(bytes)
        .map_err(|e| io_reason(&e))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "file grew past the {MAX_FILE_BYTES} byte limit while read"
        ));
    }
    if let Some(pos) = memchr::memchr(0, &bytes[..bytes.len().min(8192)]) {
        return Err(format!("binary file (NUL byte at offset {pos})"));
    }
    Ok(stamp)
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        std::io::ErrorKind::NotFound => "file disappeared during the run".to_string(),
        _ => e.to_string(),
    }
}

/// A problem in a file that is read but not checked (the configuration, a policy), located
/// in that file when possible: fatal for the run, rendered with a code frame.
#[derive(Debug)]
pub struct FileError {
    pub path: PathBuf,
    pub text: String,
    /// Byte range in `text`, when the error names a position.
    pub span: Option<(usize, usize)>,
    pub message: String,
    pub help: Option<String>,
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some((start, _)) = self.span {
            let lc = LineIndex::new(&self.text).line_col(&self.text, start);
            write!(
                f,
                "{}:{}:{}: {}",
                self.path.display(),
                lc.line,
                lc.column,
                self.message
            )
        } else {
            write!(f, "{}: {}", self.path.display(), self.message)
        }
    }
}

impl std::error::Error for FileError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_released_text_is_read_again_and_a_change_is_detected() {
        let dir = tempfile::tempdir().unwrap();
        let abs = dir.path().join("a.yaml");
        std::fs::write(&abs, "a: 1\nb: 2\n").unwrap();
        let text = read_text(&abs).unwrap();
        let mut f = SourceFile::new(FileId(0), "a.yaml".into(), abs.clone(), text);
        f.release_text();
        assert!(f.text_was_released());
        assert_eq!(f.line_col(5).line, 2);
        assert_eq!(f.text(), "a: 1\nb: 2\n");
        assert!(!f.changed_during_run());

        let text = read_text(&abs).unwrap();
        let mut g = SourceFile::new(FileId(0), "a.yaml".into(), abs.clone(), text);
        g.release_text();
        std::fs::write(&abs, "a: 10\nb: 2\n").unwrap();
        assert_eq!(g.text(), "");
        assert!(g.changed_during_run());
    }

    #[test]
    fn a_file_under_its_root_is_found_there() {
        let root: Arc<Path> = Path::new("/repo").into();
        let f = SourceFile::new(
            FileId(0),
            "a/b.yaml".into(),
            "/repo/a/b.yaml".into(),
            "".into(),
        )
        .under(&root);
        assert!(matches!(f.on_disk, OnDisk::Under(_)));
        assert_eq!(f.abs(), Path::new("/repo/a/b.yaml"));
        // A path that is not the root joined with the relative path (a name made lossy) keeps
        // its own location.
        let g = SourceFile::new(
            FileId(1),
            "a/\u{fffd}.yaml".into(),
            "/repo/a/x.yaml".into(),
            "".into(),
        )
        .under(&root);
        assert!(matches!(g.on_disk, OnDisk::At(_)));
        assert_eq!(g.abs(), Path::new("/repo/a/x.yaml"));
    }

    #[test]
    fn a_text_not_on_disk_is_kept() {
        let mut f = SourceFile::new(
            FileId(0),
            "nowhere.yaml".into(),
            "/nonexistent/x".into(),
            "a: 1\n".into(),
        );
        f.release_text();
        assert!(!f.text_was_released());
        assert_eq!(f.text(), "a: 1\n");
    }
}
