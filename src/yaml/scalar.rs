//! Plain-scalar resolution as sigs.k8s.io/yaml (go-yaml v2, YAML 1.1) performs it, because
//! that is how Kubernetes, Helm and Argo CD read manifests: `selfHeal: yes` is `true` to them.

/// A scalar resolved the way Kubernetes and Argo CD read YAML (sigs.k8s.io/yaml, YAML 1.1).
#[derive(Clone, Debug, PartialEq)]
pub enum Resolved<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'a str),
}

#[must_use]
pub fn resolve_plain(text: &str) -> Resolved<'_> {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Resolved::Null,
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" | "true" | "True" | "TRUE" => {
            return Resolved::Bool(true);
        }
        "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" | "false" | "False" | "FALSE" => {
            return Resolved::Bool(false);
        }
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Resolved::Float(f64::INFINITY);
        }
        "-.inf" | "-.Inf" | "-.INF" => return Resolved::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Resolved::Float(f64::NAN),
        _ => {}
    }
    let first = text.as_bytes()[0];
    if !(first.is_ascii_digit() || matches!(first, b'-' | b'+' | b'.')) {
        return Resolved::Str(text);
    }
    if let Some(i) = parse_int(text) {
        return Resolved::Int(i);
    }
    if is_float(text)
        && let Ok(f) = text.replace('_', "").parse::<f64>()
    {
        return Resolved::Float(f);
    }
    Resolved::Str(text)
}

fn parse_int(text: &str) -> Option<i64> {
    let (neg, body) = match text.as_bytes()[0] {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    if body.is_empty() {
        return None;
    }
    let clean: String = body.chars().filter(|&c| c != '_').collect();
    let (radix, digits) = if let Some(h) = clean.strip_prefix("0x") {
        (16, h)
    } else if let Some(b) = clean.strip_prefix("0b") {
        (2, b)
    } else if clean.len() > 1 && clean.starts_with('0') {
        (8, &clean[1..])
    } else {
        (10, clean.as_str())
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let v = i64::from_str_radix(digits, radix).ok()?;
    Some(if neg { -v } else { v })
}

fn is_float(text: &str) -> bool {
    // [-+]?([0-9][0-9_]*)?\.[0-9.]*([eE][-+][0-9]+)? and the integer-with-exponent form.
    let body = text.trim_start_matches(['-', '+']);
    let mut seen_digit = false;
    let mut seen_dot = false;
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '0'..='9' => seen_digit = true,
            '_' => {}
            '.' if !seen_dot => seen_dot = true,
            'e' | 'E' if seen_digit => {
                if matches!(chars.peek(), Some('+' | '-')) {
                    chars.next();
                }
                let rest: String = chars.collect();
                return !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit());
            }
            _ => return false,
        }
    }
    seen_digit
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml11_scalars() {
        assert_eq!(resolve_plain("yes"), Resolved::Bool(true));
        assert_eq!(resolve_plain("Off"), Resolved::Bool(false));
        assert_eq!(resolve_plain("~"), Resolved::Null);
        assert_eq!(resolve_plain("0x1F"), Resolved::Int(31));
        assert_eq!(resolve_plain("010"), Resolved::Int(8));
        assert_eq!(resolve_plain("-3"), Resolved::Int(-3));
        assert_eq!(resolve_plain("1.5"), Resolved::Float(1.5));
        assert_eq!(resolve_plain("1e3"), Resolved::Float(1000.0));
        assert_eq!(resolve_plain("1.2.3"), Resolved::Str("1.2.3"));
        assert_eq!(resolve_plain("none"), Resolved::Str("none"));
        assert_eq!(resolve_plain("v1.0"), Resolved::Str("v1.0"));
        assert_eq!(resolve_plain("-"), Resolved::Str("-"));
        assert_eq!(resolve_plain("."), Resolved::Str("."));
        assert_eq!(resolve_plain("089"), Resolved::Float(89.0));
    }
}
