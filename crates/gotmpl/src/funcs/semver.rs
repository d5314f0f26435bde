//! Sprig's `semverCompare`: Masterminds/semver v3 constraints. (`semver`, the object, is not
//! implemented.)

use std::cmp::Ordering;

use super::{Budget, F, FnError, Func, Value, arity, st};

pub(crate) const FUNCS: &[(&str, Func)] = &[
    ("semverCompare", Func::Native(semver_compare)),
    ("semver", Func::Unsupported),
];

fn semver_compare(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    arity(name, a, 2)?;
    compare(st(&a[0])?, st(&a[1])?)
        .map(|x| Value::Bool(x, None))
        .map_err(FnError::Msg)
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Version {
    major: u64,
    minor: u64,
    patch: u64,
    pre: String,
}

/// A version; `wild` counts the trailing components given as `x`/`*` or omitted.
fn parse_version(s: &str, allow_wild: bool) -> Result<(Version, usize), String> {
    let s = s.trim();
    let s = s.strip_prefix('v').unwrap_or(s);
    let s = s.split('+').next().unwrap_or("");
    let (core, pre) = match s.split_once('-') {
        Some((c, p)) => (c, p.to_string()),
        None => (s, String::new()),
    };
    let parts: Vec<&str> = core.split('.').collect();
    if parts.is_empty() || parts.len() > 3 || parts[0].is_empty() {
        return Err("Invalid Semantic Version".to_string());
    }
    let mut nums = [0u64; 3];
    let mut wild = 3 - parts.len();
    for (i, p) in parts.iter().enumerate() {
        if allow_wild && matches!(*p, "x" | "X" | "*") {
            wild = wild.max(3 - i);
            continue;
        }
        nums[i] = p
            .parse()
            .map_err(|_| "Invalid Semantic Version".to_string())?;
    }
    Ok((
        Version {
            major: nums[0],
            minor: nums[1],
            patch: nums[2],
            pre,
        },
        wild,
    ))
}

fn cmp_pre(a: &str, b: &str) -> Ordering {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        _ => {}
    }
    let (ai, bi): (Vec<&str>, Vec<&str>) = (a.split('.').collect(), b.split('.').collect());
    for (x, y) in ai.iter().zip(bi.iter()) {
        let o = match (x.parse::<u64>(), y.parse::<u64>()) {
            (Ok(m), Ok(n)) => m.cmp(&n),
            (Ok(_), Err(_)) => Ordering::Less,
            (Err(_), Ok(_)) => Ordering::Greater,
            _ => x.cmp(y),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    ai.len().cmp(&bi.len())
}

fn cmp(a: &Version, b: &Version) -> Ordering {
    (a.major, a.minor, a.patch)
        .cmp(&(b.major, b.minor, b.patch))
        .then_with(|| cmp_pre(&a.pre, &b.pre))
}

fn bump(v: &Version, wild: usize) -> Version {
    // The first version past a wildcard range.
    match wild {
        3 => Version {
            major: u64::MAX,
            minor: 0,
            patch: 0,
            pre: String::new(),
        },
        2 => Version {
            major: v.major + 1,
            minor: 0,
            patch: 0,
            pre: String::new(),
        },
        1 => Version {
            major: v.major,
            minor: v.minor + 1,
            patch: 0,
            pre: String::new(),
        },
        _ => Version {
            major: v.major,
            minor: v.minor,
            patch: v.patch + 1,
            pre: String::new(),
        },
    }
}

fn check_one(clause: &str, v: &Version) -> Result<bool, String> {
    let clause = clause.trim();
    let ops = [">=", "=>", "<=", "=<", "!=", "~>", ">", "<", "=", "~", "^"];
    let (op, rest) = ops
        .iter()
        .find_map(|op| clause.strip_prefix(op).map(|r| (*op, r.trim())))
        .unwrap_or(("", clause));
    let (c, wild) = parse_version(rest, true)?;
    // A prerelease version only satisfies constraints that name a prerelease.
    if !v.pre.is_empty() && c.pre.is_empty() {
        return Ok(false);
    }
    let lo = Version {
        pre: c.pre.clone(),
        ..c.clone()
    };
    Ok(match op {
        "" | "=" => {
            if wild > 0 {
                cmp(v, &lo) != Ordering::Less && cmp(v, &bump(&c, wild)) == Ordering::Less
            } else {
                cmp(v, &c) == Ordering::Equal
            }
        }
        "!=" => {
            if wild > 0 {
                !(cmp(v, &lo) != Ordering::Less && cmp(v, &bump(&c, wild)) == Ordering::Less)
            } else {
                cmp(v, &c) != Ordering::Equal
            }
        }
        ">" => {
            if wild > 0 {
                cmp(v, &bump(&c, wild)) != Ordering::Less
            } else {
                cmp(v, &c) == Ordering::Greater
            }
        }
        ">=" | "=>" => cmp(v, &c) != Ordering::Less,
        "<" => cmp(v, &c) == Ordering::Less,
        "<=" | "=<" => {
            if wild > 0 {
                cmp(v, &bump(&c, wild)) == Ordering::Less
            } else {
                cmp(v, &c) != Ordering::Greater
            }
        }
        "~" | "~>" => {
            let upper = if wild >= 2 { bump(&c, 2) } else { bump(&c, 1) };
            cmp(v, &c) != Ordering::Less && cmp(v, &upper) == Ordering::Less
        }
        _ => {
            // ^: up to the next change of the first non-zero component.
            let upper = if c.major > 0 || wild >= 2 {
                bump(&c, 2)
            } else if c.minor > 0 || wild >= 1 {
                bump(&c, 1)
            } else {
                bump(&c, 0)
            };
            cmp(v, &c) != Ordering::Less && cmp(v, &upper) == Ordering::Less
        }
    })
}

/// `semverCompare constraint version`.
pub fn compare(constraint: &str, version: &str) -> Result<bool, String> {
    let (v, _) = parse_version(version, false)?;
    for group in constraint.split("||") {
        let mut ok = true;
        let group = group.trim();
        // "a - b" hyphen ranges.
        let clauses: Vec<String> = if let Some((a, b)) = group.split_once(" - ") {
            vec![format!(">={}", a.trim()), format!("<={}", b.trim())]
        } else {
            let mut out = Vec::new();
            let mut pending_op = String::new();
            for tok in group
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|t| !t.is_empty())
            {
                if tok.chars().all(|c| "<>=!~^".contains(c)) {
                    pending_op = tok.to_string();
                } else {
                    out.push(format!("{pending_op}{tok}"));
                    pending_op.clear();
                }
            }
            out
        };
        for c in &clauses {
            if !check_one(c, &v)? {
                ok = false;
                break;
            }
        }
        if ok && !clauses.is_empty() {
            return Ok(true);
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::compare;

    #[test]
    fn constraints() {
        assert!(compare(">=1.21-0", "v1.31.0").unwrap());
        assert!(!compare("<1.19", "1.31.0").unwrap());
        assert!(compare("^1.2.3", "1.9.0").unwrap());
        assert!(!compare("^1.2.3", "2.0.0").unwrap());
        assert!(compare("~1.2", "1.2.9").unwrap());
        assert!(compare("1.2.x", "1.2.7").unwrap());
        assert!(compare(">=1.0, <2.0 || >=3", "3.1.0").unwrap());
        assert!(!compare(">=1.20", "1.27.4-eks-2d98532").unwrap());
        assert!(compare(">=1.20-0", "1.27.4-eks-2d98532").unwrap());
    }
}
