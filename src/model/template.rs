//! ApplicationSet templating: fasttemplate (`{{path.basename}}`) and Go templates
//! (`goTemplate: true`, `{{.path.basename}}`, a subset of Sprig functions).

/// Written in place of a value that depends on parameters unknown offline.
pub const UNKNOWN: &str = "\u{1}unknown\u{1}";

#[must_use]
pub fn is_unknown(s: &str) -> bool {
    s.contains(UNKNOWN)
}
