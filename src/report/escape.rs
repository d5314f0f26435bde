//! The one escaping of user text (names, messages, paths, source lines) in the human formats
//! (text, concise, github, graph): a control character written raw would move the cursor,
//! recolour or clear the terminal, or start a CI workflow command (`\n::add-mask::`), so a
//! repository could forge what a log says. JSON, SARIF and the other machine formats are exact
//! (their serialisers escape).

use std::borrow::Cow;

/// Whether `c` must not reach a terminal or a CI log raw: C0 and C1 controls, DEL, the
/// Unicode line and paragraph separators, and the bidirectional overrides and isolates that
/// reorder what is shown (as rustc warns about them).
#[must_use]
pub fn is_unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
        )
}

/// `s` with every [unsafe character](is_unsafe_char) written as a Rust escape: `\n`, `\r`,
/// `\t`, `\0`, `\x1b` for the other ASCII controls, `\u{202e}` for the rest. Borrowed when
/// there is none, which is nearly always.
#[must_use]
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe_char) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        push_escaped(&mut out, c);
    }
    Cow::Owned(out)
}

/// `s` with line breaks kept (a help text's or a diff's lines), every other unsafe character
/// escaped as [`escape`] does.
#[must_use]
pub fn escape_keeping_lines(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| c != '\n' && is_unsafe_char(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c == '\n' {
            out.push(c);
        } else {
            push_escaped(&mut out, c);
        }
    }
    Cow::Owned(out)
}

fn push_escaped(out: &mut String, c: char) {
    use std::fmt::Write as _;
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\0' => out.push_str("\\0"),
        c if c.is_ascii() && is_unsafe_char(c) => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c if is_unsafe_char(c) => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
        c => out.push(c),
    }
}

/// A source text as a code frame shows it: each unsafe character other than a line break or
/// a tab replaced by characters of the same UTF-8 length (`?` for one byte, `¿` for two, `�`
/// for three), so byte offsets, lines and columns stay those of the file. `None` when the text
/// has none.
#[must_use]
pub fn frame_text(text: &str) -> Option<String> {
    let unsafe_in_frame = |c: char| !matches!(c, '\n' | '\r' | '\t') && is_unsafe_char(c);
    if !text.chars().any(unsafe_in_frame) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if unsafe_in_frame(c) {
            out.push(match c.len_utf8() {
                1 => '?',
                2 => '¿',
                _ => '\u{fffd}',
            });
        } else {
            out.push(c);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_become_rust_escapes() {
        assert_eq!(escape("plain `name`"), "plain `name`");
        assert!(matches!(escape("plain"), Cow::Borrowed(_)));
        assert_eq!(
            escape("evil\n::warning file=x::\r\x1b[2K\t\0\x7f"),
            "evil\\n::warning file=x::\\r\\x1b[2K\\t\\0\\x7f"
        );
        assert_eq!(
            escape("a\u{9b}b\u{202e}c\u{2028}"),
            "a\\u{9b}b\\u{202e}c\\u{2028}"
        );
        assert_eq!(escape_keeping_lines("a\nb\x1b"), "a\nb\\x1b");
    }

    #[test]
    fn code_frames_keep_offsets() {
        assert_eq!(frame_text("a: b\n"), None);
        let text = "a: \x1b[31m\u{9b}\u{202e}x\r\n\tb\n";
        let shown = frame_text(text).unwrap();
        assert_eq!(shown, "a: ?[31m¿\u{fffd}x\r\n\tb\n");
        assert_eq!(shown.len(), text.len());
        assert_eq!(shown.chars().count(), text.chars().count());
    }
}
