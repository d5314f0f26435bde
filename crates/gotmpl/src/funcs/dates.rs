//! Sprig's date functions: they read the clock, so none is evaluated here.

use super::Func;

pub(crate) const FUNCS: &[(&str, Func)] = &[
    ("now", Func::Unsupported),
    ("date", Func::Unsupported),
    ("dateInZone", Func::Unsupported),
    ("date_in_zone", Func::Unsupported),
    ("dateModify", Func::Unsupported),
    ("date_modify", Func::Unsupported),
    ("mustDateModify", Func::Unsupported),
    ("ago", Func::Unsupported),
    ("toDate", Func::Unsupported),
    ("mustToDate", Func::Unsupported),
    ("unixEpoch", Func::Unsupported),
    ("duration", Func::Unsupported),
    ("durationRound", Func::Unsupported),
    ("htmlDate", Func::Unsupported),
    ("htmlDateInZone", Func::Unsupported),
];
