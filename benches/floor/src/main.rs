//! The parse floor: `gitops-lint-floor DIR` walks DIR as `check` does (the `ignore` crate, hidden
//! files included, `.git` and Helm chart `templates/` left out since they are not YAML), reads
//! every `.yaml`/`.yml` file and pulls granit-parser's events to the end of the stream with the
//! linter's options, building no tree. Prints "<files> files <documents> documents <bytes> bytes".
use granit_parser::{Event, Options, Parser};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

fn yaml_files(root: &Path) -> Vec<PathBuf> {
    let walk = ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .git_global(false)
        .filter_entry(|e| {
            if !e.file_type().is_some_and(|t| t.is_dir()) {
                return true;
            }
            let chart_templates = e.file_name() == "templates"
                && e.path().parent().is_some_and(|p| p.join("Chart.yaml").is_file());
            e.file_name() != ".git" && !chart_templates
        })
        .build();
    walk.filter_map(Result::ok)
        .map(ignore::DirEntry::into_path)
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect()
}

/// Documents in `text`, counted from the parser's events; a syntax error skips to the next
/// document, as the linter's loader does.
fn documents(text: &str) -> usize {
    let mut options = Options::default();
    options.emit_comments = false;
    let mut parser = Parser::new_from_str_with_options(text, options);
    let mut count = 0;
    loop {
        match parser.next_event() {
            None | Some(Ok((Event::StreamEnd, _))) => return count,
            Some(Ok((Event::DocumentStart(..), _))) => count += 1,
            Some(Ok(_)) => {}
            Some(Err(_)) => {
                if !matches!(parser.proceed_next_document(), Ok(true)) {
                    return count;
                }
            }
        }
    }
}

fn main() {
    let Some(root) = std::env::args().nth(1) else {
        eprintln!("usage: gitops-lint-floor DIR");
        std::process::exit(2);
    };
    let files = yaml_files(Path::new(&root));
    let (docs, bytes) = files
        .par_iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            (documents(&text), text.len())
        })
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    println!("{} files {docs} documents {bytes} bytes", files.len());
}
