//! The one way gitops-lint reads and writes the files a repository holds or names, confined to
//! the repository's root.
//!
//! A repository is hostile input: a committed symbolic link may lead to `/proc/self/environ`
//! or `~/.ssh`, a file may be a FIFO (a read blocks forever) or a link to `/dev/zero` (a read
//! never ends), and the name of a temporary file may be taken by a planted link. So:
//!
//! - [`Root::read`] with [`Reach::Root`] resolves every symbolic link and refuses a path that
//!   leads outside the root; it reads only regular files (a FIFO, socket or device is never
//!   opened), and at most `limit` bytes.
//! - [`Root::write`] refuses a path outside the root; it writes through a link that stays
//!   inside the root (the link stays a link), refuses hard-linked and read-only files and
//!   files whose owner it cannot keep, keeps the mode and owner, and replaces the file
//!   atomically: a temporary file created with `O_CREAT|O_EXCL` (the `tempfile` crate, a random
//!   name) in the target's folder, synced, renamed over it.
//! - A path the user named outside the root (`--config ~/team.yaml`, `--baseline /dev/stdin`) is
//!   the user's own ([`Reach::Anywhere`], [`Root::reach_of`]): read where it is, still only a
//!   regular file within the limit. Files the repository names or holds are always
//!   [`Reach::Root`].
//!
//! Every reader goes through here: the walk's reads ([`super::read_text_into`]: the walk has
//! checked each entry's type and where its link leads, so only the file type is checked again
//! there), the configuration, policies and their data, baselines, `--output`, `init`, the
//! language server and `--fix`. The Helm chart loader refuses a `charts/` folder or entry that
//! [`Root::resolve`] finds leading out of the root, and reads its archives and `.Files` here.
//!
//! What this does not cover: another local process swapping a folder for a link between the
//! check of a path and its use (the final component is opened with `O_NOFOLLOW`, the folders
//! above it are not re-checked). The checks are for a repository as it was checked out.

use std::ffi::OsString;
use std::fs::{File, Metadata};
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

/// Largest file read; larger ones are refused rather than exhausting memory.
pub const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// A path that could not be read or written, and why (lowercase, for `path: reason`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FsError {
    pub path: PathBuf,
    pub reason: String,
    /// The file is larger than the limit it was read with.
    over_limit: bool,
}

impl FsError {
    fn new(path: &Path, reason: impl Into<String>) -> FsError {
        FsError {
            path: path.to_path_buf(),
            reason: reason.into(),
            over_limit: false,
        }
    }

    fn over(path: &Path, reason: String) -> FsError {
        FsError {
            over_limit: true,
            ..FsError::new(path, reason)
        }
    }

    /// Whether the read was refused because the file is larger than its limit (for callers
    /// that word that limit their own way).
    #[must_use]
    pub fn over_limit(&self) -> bool {
        self.over_limit
    }

    fn io(path: &Path, e: &std::io::Error) -> FsError {
        FsError::new(path, io_reason(e))
    }
}

impl std::fmt::Display for FsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.reason)
    }
}

impl std::error::Error for FsError {}

/// The reason for a path outside the root, as written.
pub const OUTSIDE: &str = "outside the repository root";
/// The reason for a symbolic link that leads outside the root.
pub const LINK_OUTSIDE: &str = "a symbolic link to a place outside the repository root";
/// The reason for a FIFO, socket or device.
pub const NOT_REGULAR: &str = "not a regular file (a FIFO, socket or device)";

/// How far a path may lead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// The repository's own path: it and every link on the way must stay inside the root.
    Root,
    /// A path the user named outside the root: read where it is.
    Anywhere,
}

/// A repository root, the boundary of every [`Reach::Root`] read and of every write.
#[derive(Clone, Debug)]
pub struct Root {
    /// As given, made absolute (`.` and `..` resolved without following links).
    given: PathBuf,
    /// With every link resolved (`given` when that fails).
    canonical: PathBuf,
}

impl Root {
    #[must_use]
    pub fn new(root: &Path) -> Root {
        let given = lexical(root);
        let canonical = given.canonicalize().unwrap_or_else(|_| given.clone());
        Root { given, canonical }
    }

    /// The root as given (absolute).
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.given
    }

    /// Whether `path` (absolute, or relative to the current directory) is under the root as
    /// written, before any link is followed.
    #[must_use]
    pub fn holds(&self, path: &Path) -> bool {
        let p = lexical(path);
        p.starts_with(&self.given) || p.starts_with(&self.canonical)
    }

    /// How far a path the user named may lead: one in the repository is the repository's, and
    /// must stay inside it; one elsewhere is the user's own.
    #[must_use]
    pub fn reach_of(&self, named: &Path) -> Reach {
        let p = lexical(named);
        let parent_inside = p
            .parent()
            .and_then(|d| d.canonicalize().ok())
            .is_some_and(|d| d.starts_with(&self.canonical));
        if self.holds(&p) || parent_inside {
            Reach::Root
        } else {
            Reach::Anywhere
        }
    }

    /// `path` with every symbolic link resolved; it must exist and be inside the root.
    pub fn resolve(&self, path: &Path) -> Result<PathBuf, FsError> {
        let p = lexical(path);
        if !self.holds(&p) {
            return Err(FsError::new(path, OUTSIDE));
        }
        let resolved = p.canonicalize().map_err(|e| {
            let dangling = e.kind() == std::io::ErrorKind::NotFound
                && std::fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink());
            if dangling {
                FsError::new(path, "a broken symbolic link")
            } else {
                FsError::io(path, &e)
            }
        })?;
        if !resolved.starts_with(&self.canonical) {
            return Err(FsError::new(path, LINK_OUTSIDE));
        }
        Ok(resolved)
    }

    /// The bytes of a regular file, at most `limit`, refused when `reach` is [`Reach::Root`]
    /// and the path leads outside the root.
    pub fn read(&self, path: &Path, reach: Reach, limit: u64) -> Result<Vec<u8>, FsError> {
        match reach {
            Reach::Root => read_regular(path, &self.resolve(path)?, true, limit),
            Reach::Anywhere => read_file(path, limit),
        }
    }

    /// [`Root::read`] as UTF-8 text.
    pub fn read_text(&self, path: &Path, reach: Reach, limit: u64) -> Result<String, FsError> {
        utf8(path, self.read(path, reach, limit)?)
    }

    /// The entries of a folder inside the root (links are listed as links, not followed),
    /// sorted by name.
    pub fn read_dir(&self, path: &Path) -> Result<Vec<Entry>, FsError> {
        let dir = self.resolve(path)?;
        let listing = std::fs::read_dir(&dir).map_err(|e| FsError::io(path, &e))?;
        let mut out: Vec<Entry> = listing
            .filter_map(Result::ok)
            .filter_map(|e| {
                // `DirEntry::file_type` does not follow links.
                let t = e.file_type().ok()?;
                let kind = if t.is_symlink() {
                    Kind::Link
                } else if t.is_dir() {
                    Kind::Folder
                } else if t.is_file() {
                    Kind::File
                } else {
                    Kind::Other
                };
                Some(Entry {
                    path: path.join(e.file_name()),
                    name: e.file_name(),
                    kind,
                })
            })
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// Writes `bytes` to `path` inside the root, atomically (see the module's documentation).
    /// With `expected`, the file must still hold those bytes: a file that changed since it was
    /// read is not written.
    pub fn write(&self, path: &Path, bytes: &[u8], expected: Option<&[u8]>) -> Result<(), FsError> {
        let target = self.write_target(path)?;
        let existing = match std::fs::symlink_metadata(&target) {
            Ok(m) => Some(m),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(FsError::io(path, &e)),
        };
        match &existing {
            Some(m) => refuse_to_replace(path, m)?,
            None if expected.is_some() => {
                return Err(FsError::new(path, "it was deleted during the run"));
            }
            None => {}
        }
        if let Some(expected) = expected {
            let current = read_regular(path, &target, true, MAX_FILE_BYTES)?;
            if current != expected {
                return Err(FsError::new(path, "it changed on disk during the run"));
            }
        }
        replace(path, &target, bytes, existing.as_ref())
    }

    /// Where a write of `path` goes: the file a link inside the root leads to, or the path in
    /// its folder with the folder's links resolved.
    fn write_target(&self, path: &Path) -> Result<PathBuf, FsError> {
        let p = lexical(path);
        if !self.holds(&p) {
            return Err(FsError::new(path, OUTSIDE));
        }
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => return self.resolve(path),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(FsError::io(path, &e)),
        }
        let (Some(dir), Some(name)) = (p.parent(), p.file_name()) else {
            return Err(FsError::new(path, "not a file name"));
        };
        let dir = self
            .resolve(dir)
            .map_err(|e| FsError::new(path, e.reason))?;
        Ok(dir.join(name))
    }
}

/// One entry of [`Root::read_dir`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: OsString,
    /// The folder as given, joined with `name`.
    pub path: PathBuf,
    pub kind: Kind,
}

/// What an entry is, without following a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    File,
    Folder,
    Link,
    /// A FIFO, socket or device.
    Other,
}

/// The bytes of a regular file the user named (links followed), at most `limit`.
pub fn read_file(path: &Path, limit: u64) -> Result<Vec<u8>, FsError> {
    read_regular(path, &lexical(path), false, limit)
}

/// [`read_file`] as UTF-8 text.
pub fn read_file_text(path: &Path, limit: u64) -> Result<String, FsError> {
    utf8(path, read_file(path, limit)?)
}

fn utf8(path: &Path, bytes: Vec<u8>) -> Result<String, FsError> {
    String::from_utf8(bytes).map_err(|e| {
        FsError::new(
            path,
            format!(
                "not valid UTF-8 (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

/// Opens a file the walk found (its type and where its link leads were checked there) without
/// blocking on a FIFO put in its place; the caller checks the handle's type.
pub(crate) fn open_walked(path: &Path) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options.open(path)
}

/// Opens `target` for reading if it is a regular file: its type is looked up before the open
/// (opening a device can have effects) and checked again on the handle. `O_NONBLOCK`: a FIFO
/// put in its place meanwhile does not block the open; `nofollow`: nor does a link (for
/// `target`s whose links are already resolved).
pub fn open_regular(
    shown: &Path,
    target: &Path,
    nofollow: bool,
) -> Result<(File, Metadata), FsError> {
    let before = std::fs::metadata(target).map_err(|e| FsError::io(shown, &e))?;
    regular(shown, &before)?;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let follow = if nofollow { libc::O_NOFOLLOW } else { 0 };
        options.custom_flags(libc::O_NONBLOCK | follow);
    }
    #[cfg(not(unix))]
    let _ = nofollow;
    let file = options.open(target).map_err(|e| FsError::io(shown, &e))?;
    let meta = file.metadata().map_err(|e| FsError::io(shown, &e))?;
    regular(shown, &meta)?;
    Ok((file, meta))
}

fn regular(shown: &Path, meta: &Metadata) -> Result<(), FsError> {
    if meta.is_dir() {
        Err(FsError::new(shown, "a folder, not a file"))
    } else if !meta.is_file() {
        Err(FsError::new(shown, NOT_REGULAR))
    } else {
        Ok(())
    }
}

fn read_regular(
    shown: &Path,
    target: &Path,
    nofollow: bool,
    limit: u64,
) -> Result<Vec<u8>, FsError> {
    let (file, meta) = open_regular(shown, target, nofollow)?;
    let len = meta.len();
    if len > limit {
        return Err(FsError::over(
            shown,
            format!("file is {len} bytes, larger than the {limit} byte limit"),
        ));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0).saturating_add(1));
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| FsError::io(shown, &e))?;
    if bytes.len() as u64 > limit {
        return Err(FsError::over(
            shown,
            format!("file grew past the {limit} byte limit while read"),
        ));
    }
    Ok(bytes)
}

/// Why an existing file is not replaced: not a regular file, read-only, or hard-linked (a
/// rename would give the file's other names the old text, silently).
fn refuse_to_replace(shown: &Path, meta: &Metadata) -> Result<(), FsError> {
    regular(shown, meta)?;
    if meta.permissions().readonly() {
        return Err(FsError::new(shown, "it is read-only"));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let links = meta.nlink();
        if links > 1 {
            return Err(FsError::new(
                shown,
                format!("it has {links} hard links, which a rewrite would separate"),
            ));
        }
    }
    Ok(())
}

/// Replaces `target` (a file, or nothing yet) with `bytes` through a temporary file in its
/// folder, keeping the mode and owner of `existing`.
fn replace(
    shown: &Path,
    target: &Path,
    bytes: &[u8],
    existing: Option<&Metadata>,
) -> Result<(), FsError> {
    let dir = target.parent().unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".gitops-lint.tmp");
    #[cfg(unix)]
    {
        // A new file gets the mode `std::fs::write` gives (0666 less the umask).
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let cannot =
        |e: &std::io::Error| FsError::new(shown, format!("cannot write it: {}", io_reason(e)));
    let mut tmp = builder.tempfile_in(dir).map_err(|e| cannot(&e))?;
    tmp.write_all(bytes).map_err(|e| cannot(&e))?;
    if let Some(meta) = existing {
        keep_owner(shown, tmp.as_file(), meta)?;
        // After the owner: changing it clears the set-user-id and set-group-id bits.
        tmp.as_file()
            .set_permissions(meta.permissions())
            .map_err(|e| cannot(&e))?;
    }
    tmp.as_file().sync_all().map_err(|e| cannot(&e))?;
    tmp.persist(target).map_err(|e| cannot(&e.error))?;
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(unix)]
fn keep_owner(shown: &Path, tmp: &File, meta: &Metadata) -> Result<(), FsError> {
    use std::os::unix::fs::MetadataExt;
    let ours = tmp.metadata().map_err(|e| FsError::io(shown, &e))?;
    let uid = (ours.uid() != meta.uid()).then_some(meta.uid());
    let gid = (ours.gid() != meta.gid()).then_some(meta.gid());
    if uid.is_none() && gid.is_none() {
        return Ok(());
    }
    std::os::unix::fs::fchown(tmp, uid, gid).map_err(|_| {
        FsError::new(
            shown,
            format!(
                "it belongs to user {} and group {}, which a rewrite by this user would change",
                meta.uid(),
                meta.gid()
            ),
        )
    })
}

#[cfg(not(unix))]
fn keep_owner(_: &Path, _: &File, _: &Metadata) -> Result<(), FsError> {
    Ok(())
}

/// `path` made absolute against the current directory, with `.` and `..` resolved without
/// following links.
#[must_use]
pub fn lexical(path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().map_or_else(|_| path.to_path_buf(), |cwd| cwd.join(path))
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// A short lowercase reason for an I/O error.
#[must_use]
pub fn io_reason(e: &std::io::Error) -> String {
    #[cfg(unix)]
    if e.raw_os_error() == Some(libc::ELOOP) {
        return "a symbolic link loop".into();
    }
    match e.kind() {
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        std::io::ErrorKind::NotFound => "no such file or folder".into(),
        _ => {
            let text = e.to_string();
            // "Read-only file system (os error 30)" → "read-only file system"
            let text = text.split(" (os error").next().unwrap_or(&text);
            let mut chars = text.chars();
            chars.next().map_or_else(String::new, |c| {
                c.to_lowercase().chain(chars).collect::<String>()
            })
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};

    /// A root `repo/` beside an `outside/` folder holding a marker file.
    fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&repo).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("marker"), "TOKEN=outside\n").unwrap();
        (dir, repo, outside)
    }

    #[test]
    fn reads_stay_inside_the_root_and_read_only_regular_files() {
        let (_dir, repo, outside) = setup();
        let root = Root::new(&repo);
        std::fs::write(repo.join("a.yaml"), "a: 1\n").unwrap();
        symlink("a.yaml", repo.join("inside.yaml")).unwrap();
        symlink(outside.join("marker"), repo.join("out.yaml")).unwrap();
        symlink("/dev/zero", repo.join("zero.yaml")).unwrap();
        symlink("missing.yaml", repo.join("dangling.yaml")).unwrap();
        std::fs::create_dir(repo.join("folder")).unwrap();
        // FIFOs: `tests/it/hostile/fs.rs` (making one here would start a process).
        let read = |rel: &str| root.read_text(&repo.join(rel), Reach::Root, 100);
        assert_eq!(read("inside.yaml").unwrap(), "a: 1\n");
        assert_eq!(read("out.yaml").unwrap_err().reason, LINK_OUTSIDE);
        assert_eq!(read("zero.yaml").unwrap_err().reason, LINK_OUTSIDE);
        assert_eq!(
            read("dangling.yaml").unwrap_err().reason,
            "a broken symbolic link"
        );
        assert_eq!(read("folder").unwrap_err().reason, "a folder, not a file");
        assert_eq!(read("../outside/marker").unwrap_err().reason, OUTSIDE);
        // A device the user names is the user's, but still not a regular file.
        let zero = root.read(Path::new("/dev/zero"), Reach::Anywhere, 100);
        assert_eq!(zero.unwrap_err().reason, NOT_REGULAR);
        std::fs::write(repo.join("big.yaml"), "x".repeat(101)).unwrap();
        assert!(
            read("big.yaml")
                .unwrap_err()
                .reason
                .contains("100 byte limit")
        );
        assert_eq!(root.reach_of(&outside.join("marker")), Reach::Anywhere);
        assert_eq!(root.reach_of(&repo.join("out.yaml")), Reach::Root);
    }

    #[test]
    fn a_folder_lists_links_as_links() {
        let (_dir, repo, outside) = setup();
        std::fs::write(repo.join("b.yaml"), "").unwrap();
        symlink(&outside, repo.join("a")).unwrap();
        let root = Root::new(&repo);
        let entries = root.read_dir(&repo).unwrap();
        let kinds: Vec<(&str, Kind)> = entries
            .iter()
            .map(|e| (e.name.to_str().unwrap(), e.kind))
            .collect();
        assert_eq!(kinds, [("a", Kind::Link), ("b.yaml", Kind::File)]);
        assert_eq!(
            root.read_dir(&repo.join("a")).unwrap_err().reason,
            LINK_OUTSIDE
        );
    }

    #[test]
    fn a_write_keeps_the_link_mode_and_owner_and_ignores_planted_temporary_names() {
        let (_dir, repo, outside) = setup();
        let root = Root::new(&repo);
        std::fs::create_dir(repo.join("real")).unwrap();
        let real = repo.join("real/app.yaml");
        std::fs::write(&real, "old\n").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
        symlink("real/app.yaml", repo.join("app.yaml")).unwrap();
        // Links at the names a temporary file might take.
        for name in [".app.yaml.gitops-lint.tmp", ".app.yaml.tmp"] {
            symlink(outside.join("marker"), repo.join("real").join(name)).unwrap();
        }
        let owner = std::fs::metadata(&real).unwrap();
        root.write(&repo.join("app.yaml"), b"new\n", Some(b"old\n"))
            .unwrap();
        let link = std::fs::symlink_metadata(repo.join("app.yaml")).unwrap();
        assert!(link.file_type().is_symlink(), "the link stays a link");
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new\n");
        let after = std::fs::metadata(&real).unwrap();
        assert_eq!(after.mode() & 0o7777, 0o640);
        assert_eq!((after.uid(), after.gid()), (owner.uid(), owner.gid()));
        assert_eq!(
            std::fs::read_to_string(outside.join("marker")).unwrap(),
            "TOKEN=outside\n"
        );
        // A file that changed since it was read is left alone.
        let err = root.write(&real, b"newer\n", Some(b"old\n")).unwrap_err();
        assert_eq!(err.reason, "it changed on disk during the run");
        // No temporary file is left behind, and the planted links are untouched.
        let mut left: Vec<String> = std::fs::read_dir(repo.join("real"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [".app.yaml.gitops-lint.tmp", ".app.yaml.tmp", "app.yaml"]
        );
    }

    #[test]
    fn a_write_refuses_links_out_hard_links_and_read_only_files() {
        let (_dir, repo, outside) = setup();
        let root = Root::new(&repo);
        symlink(outside.join("marker"), repo.join("out.json")).unwrap();
        symlink(outside.join("new"), repo.join("dangling.json")).unwrap();
        std::fs::write(repo.join("linked.yaml"), "a\n").unwrap();
        std::fs::hard_link(repo.join("linked.yaml"), outside.join("linked.yaml")).unwrap();
        std::fs::write(repo.join("ro.yaml"), "a\n").unwrap();
        std::fs::set_permissions(repo.join("ro.yaml"), std::fs::Permissions::from_mode(0o444))
            .unwrap();
        let write = |rel: &str| {
            root.write(&repo.join(rel), b"x\n", None)
                .unwrap_err()
                .reason
        };
        assert_eq!(write("out.json"), LINK_OUTSIDE);
        assert_eq!(write("dangling.json"), "a broken symbolic link");
        assert_eq!(write("../outside/marker"), OUTSIDE);
        assert_eq!(
            write("linked.yaml"),
            "it has 2 hard links, which a rewrite would separate"
        );
        assert_eq!(write("ro.yaml"), "it is read-only");
        assert_eq!(
            std::fs::read_to_string(outside.join("marker")).unwrap(),
            "TOKEN=outside\n"
        );
        assert!(!outside.join("new").exists());
        assert_eq!(
            std::fs::read_to_string(outside.join("linked.yaml")).unwrap(),
            "a\n"
        );
        // A new file in the root is created.
        root.write(&repo.join("report.json"), b"{}\n", None)
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(repo.join("report.json")).unwrap(),
            "{}\n"
        );
    }
}
