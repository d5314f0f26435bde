//! Bounds on what a policy can cost, for the limits regorus does not enforce itself.
//!
//! - **Parse work**: regorus' parser tries the first item of every array, set and object
//!   literal as a comprehension term, then parses it again as an item, so the work doubles
//!   with each level of such nesting (`[[[…]]]`, 25 levels: 33 s). [`parse_work`] estimates it
//!   from the text and the policy is refused at load above [`PARSE_WORK_LIMIT`].
//! - **Ranges**: `numbers.range` and `numbers.range_step` build their whole array in one call,
//!   so the time limit (checked between steps) cannot stop them, and a large range asks for
//!   the memory at once (2,000,000,000 numbers: 48 GB, an abort). They are replaced by
//!   extensions (regorus looks extensions up before builtins) that refuse more than
//!   [`MAX_RANGE_NUMBERS`] numbers.

use regorus::{Engine, Value};

/// Above this estimate of [`parse_work`] a policy is refused: about 0.3 s of regorus' parser
/// (13 levels of nested first items). The shipped pack's largest file is about 1,300.
pub const PARSE_WORK_LIMIT: u64 = 1 << 15;

/// The most numbers one `numbers.range` or `numbers.range_step` call may return (about 40 MB).
pub const MAX_RANGE_NUMBERS: i128 = 1_000_000;

/// Where a policy's parse work passes [`PARSE_WORK_LIMIT`]: the byte offsets of the
/// outermost literal whose nesting makes it so.
pub fn parse_work(text: &str) -> Option<(usize, usize)> {
    /// An open bracket: where, and whether its content is still its first item (parsed twice).
    struct Open {
        at: usize,
        doubles: bool,
    }
    let bytes = text.as_bytes();
    let mut open: Vec<Open> = Vec::new();
    let mut work: u64 = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let start = i;
        i += 1;
        match b {
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'"' => {
                while i < bytes.len() && bytes[i] != b'"' && bytes[i] != b'\n' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'`' => {
                while i < bytes.len() && bytes[i] != b'`' {
                    i += 1;
                }
                i += 1;
            }
            b'(' | b'[' | b'{' => {
                // A brace at the top level is a rule body, parsed once.
                let doubles = b != b'(' && !(b == b'{' && open.is_empty());
                open.push(Open { at: start, doubles });
                continue;
            }
            b')' | b']' | b'}' => {
                open.pop();
                continue;
            }
            b',' => {
                if let Some(last) = open.last_mut() {
                    last.doubles = false;
                }
                continue;
            }
            b if b.is_ascii_whitespace() => continue,
            _ => {}
        }
        // Each token inside `n` first items is parsed 2^n times.
        let doubling = open.iter().filter(|o| o.doubles).count();
        let times = 1u64.checked_shl(u32::try_from(doubling).unwrap_or(u32::MAX));
        work = work.saturating_add(times.map_or(u64::MAX, |t| t - 1));
        if work > PARSE_WORK_LIMIT {
            let outer = open.iter().find(|o| o.doubles).map_or(start, |o| o.at);
            let end = text[outer..]
                .find(char::is_whitespace)
                .map_or(text.len(), |n| outer + n);
            return Some((outer, end));
        }
    }
    None
}

/// Registers the bounded `numbers.range` and `numbers.range_step`.
pub(super) fn register(engine: &mut Engine) -> anyhow::Result<()> {
    engine.add_extension(
        "numbers.range".to_string(),
        2,
        Box::new(|args: Vec<Value>| match args.as_slice() {
            [from, to] => bounded_range("numbers.range", from, to, None),
            _ => anyhow::bail!("numbers.range takes 2 arguments"),
        }),
    )?;
    engine.add_extension(
        "numbers.range_step".to_string(),
        3,
        Box::new(|args: Vec<Value>| match args.as_slice() {
            [from, to, step] => bounded_range("numbers.range_step", from, to, Some(step)),
            _ => anyhow::bail!("numbers.range_step takes 3 arguments"),
        }),
    )
}

/// The numbers from `from` to `to` (both included, counting down when `to < from`) by
/// `step`, as regorus' builtins with strict errors, or an error past [`MAX_RANGE_NUMBERS`].
fn bounded_range(
    name: &str,
    from: &Value,
    to: &Value,
    step: Option<&Value>,
) -> anyhow::Result<Value> {
    let integer = |v: &Value, what: &str| -> anyhow::Result<Option<i128>> {
        match v {
            Value::Number(_) => match v.as_i128() {
                Ok(n) => Ok(Some(n)),
                // An integer beyond i128 is a range over the limit.
                Err(_) if v.as_f64().is_ok_and(|f| f.fract() == 0.0) => Ok(None),
                Err(_) => anyhow::bail!("{name}: {what} must be an integer"),
            },
            _ => anyhow::bail!("{name}: {what} must be a number"),
        }
    };
    let (from, to) = (integer(from, "operand")?, integer(to, "operand")?);
    let step = match step {
        Some(s) => match integer(s, "step")? {
            Some(s) if s > 0 => Some(s),
            _ => anyhow::bail!("{name}: step must be a positive integer"),
        },
        None => Some(1),
    };
    let count = match (from, to, step) {
        (Some(from), Some(to), Some(step)) => {
            Some((from.abs_diff(to) / step.unsigned_abs(), from, to, step))
        }
        _ => None,
    };
    let Some((gaps, from, to, step)) = count.filter(|(gaps, ..)| *gaps < MAX_RANGE_NUMBERS as u128)
    else {
        anyhow::bail!(
            "{name} would make more than {MAX_RANGE_NUMBERS} numbers, the limit of one call"
        );
    };
    let step = if to < from { -step } else { step };
    let mut values = Vec::with_capacity(usize::try_from(gaps).unwrap_or(0) + 1);
    for k in 0..=gaps {
        // Every number lies between `from` and `to`, so only the product can overflow.
        let Some(n) = i128::try_from(k)
            .ok()
            .and_then(|k| step.checked_mul(k))
            .and_then(|d| from.checked_add(d))
        else {
            anyhow::bail!("{name}: the range does not fit in 128-bit integers");
        };
        values.push(match (i64::try_from(n), u64::try_from(n)) {
            (Ok(n), _) => Value::from(n),
            (_, Ok(n)) => Value::from(n),
            #[allow(clippy::cast_precision_loss)]
            _ => Value::from(n as f64),
        });
    }
    Ok(Value::from(values))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_is_measured_by_first_items() {
        let nested = |n: usize| format!("package x\n\nv := {}1{}\n", "[".repeat(n), "]".repeat(n));
        assert!(parse_work(&nested(10)).is_none());
        let text = nested(20);
        let (start, end) = parse_work(&text).expect("20 levels are refused");
        assert_eq!(
            &text[start..end],
            &format!("{}1{}", "[".repeat(20), "]".repeat(20))
        );
        // Only first items are parsed twice: the same depth in last items costs nothing more.
        let flat = format!(
            "package x\n\nv := {}1{}\n",
            "[0, ".repeat(40),
            "]".repeat(40)
        );
        assert!(parse_work(&flat).is_none());
        // Brackets in strings and comments are text.
        let quoted = format!(
            "package x\n# {}\nv := \"{}\"\n",
            "[".repeat(40),
            "{".repeat(40)
        );
        assert!(parse_work(&quoted).is_none());
    }

    #[test]
    fn the_shipped_pack_is_far_below_the_parse_limit() {
        for (path, text) in super::super::pack::FILES {
            assert!(parse_work(text).is_none(), "{path}");
        }
    }

    #[test]
    fn ranges_are_regorus_ranges_up_to_the_limit() {
        let range = |a: i64, b: i64, s: Option<i64>| {
            bounded_range(
                "r",
                &Value::from(a),
                &Value::from(b),
                s.map(Value::from).as_ref(),
            )
        };
        let ints = |v: &[i64]| Value::from(v.iter().map(|n| Value::from(*n)).collect::<Vec<_>>());
        assert_eq!(range(1, 4, None).unwrap(), ints(&[1, 2, 3, 4]));
        assert_eq!(range(3, 1, None).unwrap(), ints(&[3, 2, 1]));
        assert_eq!(range(1, 8, Some(3)).unwrap(), ints(&[1, 4, 7]));
        assert_eq!(range(8, 1, Some(3)).unwrap(), ints(&[8, 5, 2]));
        assert_eq!(range(5, 5, None).unwrap(), ints(&[5]));
        assert!(range(1, 10, Some(0)).is_err());
        assert!(range(0, 999_999, None).is_ok());
        let err = range(0, 1_000_000, None).unwrap_err().to_string();
        assert!(err.contains("more than 1000000 numbers"), "{err}");
        assert!(range(i64::MIN, i64::MAX, None).is_err());
        assert!(bounded_range("r", &Value::from(1.5), &Value::from(3), None).is_err());
        assert!(bounded_range("r", &Value::from("a"), &Value::from(3), None).is_err());
    }
}
