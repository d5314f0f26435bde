//! Sprig's reflection: `kindOf`, `kindIs`, `typeOf`, `typeIs`.

use super::*;

pub(crate) const FUNCS: &[(&str, Func)] = &[
    ("kindOf", Func::Native(kind_of)),
    ("kindIs", Func::Native(kind_is)),
    ("typeOf", Func::Native(type_of)),
    ("typeIs", Func::Native(type_is)),
];

fn kind_of(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    s(a[0].kind_name())
}

fn kind_is(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    arity(name, a, 2)?;
    b(st(&a[0])? == a[1].kind_name())
}

fn type_of(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    s(&a[0].type_name())
}

fn type_is(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    arity(name, a, 2)?;
    b(st(&a[0])? == a[1].type_name())
}
