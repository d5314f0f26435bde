//! `gitops-lint render`: the objects each live Application deploys, as the linter sees them,
//! in multi-document YAML (like `argocd app manifests`, offline) or JSON with where each
//! object comes from.

use serde_json::json;

use crate::model::Model;
use crate::model::argocd::manifests::collect;

/// Multi-document YAML: per source a comment, then its objects.
///
/// # Errors
/// When a name is not a live Application's.
pub fn yaml(model: &Model<'_>, names: &[String]) -> Result<String, String> {
    let mut s = String::new();
    for o in collect(model, names)? {
        s.push_str(&format!(
            "# Application `{}`, source {}: {}\n",
            one_line(&o.app),
            o.source + 1,
            one_line(&o.what)
        ));
        if let Some(note) = &o.note {
            s.push_str(&format!("# {note}\n"));
        }
        for r in &o.objects {
            s.push_str(&format!("---\n# {}\n", one_line(&r.origin)));
            s.push_str(&crate::yaml::emit::to_text(&r.object));
        }
    }
    Ok(s)
}

/// JSON: an array of objects, each with its Application, source and origin.
///
/// # Errors
/// When a name is not a live Application's.
pub fn json(model: &Model<'_>, names: &[String]) -> Result<String, String> {
    let mut items = Vec::new();
    let mut sources = Vec::new();
    for o in collect(model, names)? {
        sources.push(json!({
            "application": o.app,
            "source": o.source,
            "what": o.what,
            "note": o.note,
            "objects": o.objects.len(),
        }));
        for r in o.objects {
            items.push(json!({
                "application": r.app,
                "source": r.source,
                "origin": r.origin,
                "object": r.object.to_json(),
            }));
        }
    }
    let doc = json!({ "sources": sources, "objects": items });
    Ok(serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n")
}

/// A comment line: control characters a repository could plant are escaped.
fn one_line(s: &str) -> String {
    super::escape::escape(s).into_owned()
}
