//! Sprig's environment and network functions. Helm's set refuses them when called; Argo CD
//! deletes them from its set, so there a template that names one does not parse.

use super::Func;

pub(crate) const FUNCS: &[(&str, Func)] = &[
    ("env", Func::Unsupported),
    ("expandenv", Func::Unsupported),
    ("getHostByName", Func::Unsupported),
];
