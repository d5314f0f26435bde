//! Mistakes that used to pass without a word (issue #32): each now gets a located finding or
//! a located error.

use super::bin;

/// An invalid `include` (or `exclude`) glob is a configuration error at its item, with the
/// configuration's code frame, instead of a message that names no file.
#[test]
fn an_invalid_include_glob_is_located() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("app.yaml"), "a: 1\n").unwrap();
    for key in ["include", "exclude"] {
        std::fs::write(
            dir.path().join(".gitops-lint.yaml"),
            format!("{key}:\n  - apps/**\n  - \"apps/[z\"\n"),
        )
        .unwrap();
        let o = bin().arg("check").current_dir(dir.path()).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("invalid glob `apps/[z`"), "{err}");
        assert!(err.contains(".gitops-lint.yaml:3:5"), "{err}");
    }
}
