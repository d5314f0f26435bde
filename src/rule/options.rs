//! Typed rule options. A rule declares one struct with [`rule_options!`]; its fields are the
//! rule's options. The fields written under `rules.<id>` give the rule's
//! [`RuleMeta::options`](super::RuleMeta::options) (name, kind, doc: what `explain`, `init`, the
//! docs and "did you mean" show), and configuration parsing fills them once at load, so a rule
//! reads a typed value ([`Context::options`](super::Context::options)). Keys of a configuration
//! section that only one rule reads (`argocd.external_projects`) are fields of that rule's
//! struct too, set by the section's row (`config/rows.rs`): the file format predates per-rule
//! options.

use std::any::{Any, TypeId};
use std::collections::BTreeMap;
use std::fmt::Debug;

/// The kinds of value an option takes, in a rule's `options` or a config row.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OptionKind {
    Bool,
    String,
    StringList,
    /// A whole number, zero or more.
    Count,
}

impl OptionKind {
    #[must_use]
    pub fn accepts(self, v: &serde_json::Value) -> bool {
        match self {
            OptionKind::Bool => v.is_boolean(),
            OptionKind::String => v.is_string(),
            OptionKind::StringList => v
                .as_array()
                .is_some_and(|a| a.iter().all(serde_json::Value::is_string)),
            OptionKind::Count => v.is_u64(),
        }
    }

    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            OptionKind::Bool => "true or false",
            OptionKind::String => "a string",
            OptionKind::StringList => "a list of strings",
            OptionKind::Count => "a whole number (0 or more)",
        }
    }
}

/// A rule option accepted in `.gitops-lint.yaml` under `rules: {<id>: {<name>: ...}}`.
#[derive(Debug)]
pub struct RuleOption {
    pub name: &'static str,
    pub kind: OptionKind,
    /// One line; shown by `explain`, `init` and the docs.
    pub doc: &'static str,
    /// Sets it in the rule's typed options; `None` for an option kept as JSON only (a Rego
    /// rule's, read as `data.gitops_lint.options`).
    pub set: Option<SetOption>,
}

/// Sets one option from its value (the YAML as JSON); false when the value is not of the
/// option's kind, and nothing is set.
pub type SetOption = fn(&mut TypedOptions, &serde_json::Value) -> bool;

/// A type a `rules.<id>` option can have: its kind, and its value read from the YAML.
pub trait OptionValue: Sized {
    const KIND: OptionKind;
    /// The value, when `json` is of [`Self::KIND`].
    fn from_json(json: &serde_json::Value) -> Option<Self>;
}

impl OptionValue for bool {
    const KIND: OptionKind = OptionKind::Bool;
    fn from_json(json: &serde_json::Value) -> Option<Self> {
        json.as_bool()
    }
}

impl OptionValue for String {
    const KIND: OptionKind = OptionKind::String;
    fn from_json(json: &serde_json::Value) -> Option<Self> {
        json.as_str().map(str::to_string)
    }
}

impl OptionValue for Vec<String> {
    const KIND: OptionKind = OptionKind::StringList;
    fn from_json(json: &serde_json::Value) -> Option<Self> {
        json.as_array()?
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect()
    }
}

impl OptionValue for u64 {
    const KIND: OptionKind = OptionKind::Count;
    fn from_json(json: &serde_json::Value) -> Option<Self> {
        json.as_u64()
    }
}

/// `None`: not configured (the rule's default applies).
impl<T: OptionValue> OptionValue for Option<T> {
    const KIND: OptionKind = T::KIND;
    fn from_json(json: &serde_json::Value) -> Option<Self> {
        T::from_json(json).map(Some)
    }
}

/// A rule's options struct, made by [`rule_options!`].
pub trait Options: Any + Clone + Debug + Default + Send + Sync {
    /// The options of a run whose configuration sets none of them.
    fn unset() -> &'static Self;
}

/// The rules' typed options as configuration parsing filled them: one value per options type,
/// present once any of its options is set.
#[derive(Clone, Debug, Default)]
pub struct TypedOptions(BTreeMap<TypeId, Box<dyn AnyOptions>>);

impl TypedOptions {
    /// The options of type `T`, at their defaults when none was configured.
    #[must_use]
    pub fn get<T: Options>(&self) -> &T {
        self.0
            .get(&TypeId::of::<T>())
            .and_then(|o| o.as_any().downcast_ref())
            .unwrap_or_else(|| T::unset())
    }

    /// The options of type `T`, to set one.
    pub fn get_mut<T: Options>(&mut self) -> &mut T {
        self.0
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Box::new(T::default()))
            .as_any_mut()
            .downcast_mut()
            .expect("each entry is keyed by its own type")
    }
}

/// What [`TypedOptions`] keeps of an options type: enough to clone, print and downcast it.
trait AnyOptions: Debug + Send + Sync {
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
    fn clone_box(&self) -> Box<dyn AnyOptions>;
}

impl<T: Options> AnyOptions for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn clone_box(&self) -> Box<dyn AnyOptions> {
        Box::new(self.clone())
    }
}

impl Clone for Box<dyn AnyOptions> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// Declares a rule's options: the struct, its [`Options`] implementation and `DECLARED`, the
/// rule's [`RuleMeta::options`](super::RuleMeta::options).
///
/// ```ignore
/// rule_options! {
///     /// The options of `argocd/image-tag-none`.
///     pub struct Options {
///         /// `None`: `none`.
///         pub placeholders: Option<Vec<String>> => "tags that mean \"no image yet\"",
///         /// `argocd.external_projects`, set by the `argocd:` section's row.
///         pub external_projects: Vec<String>,
///     }
/// }
/// ```
///
/// A field with `=> "doc"` is an option under `rules.<id>`: its name is the field's, its kind
/// comes from its type ([`OptionValue`]) and the doc is the one line `explain` shows. A field
/// without one is a configuration section's key, which that section's row sets. Every field
/// starts at its type's `Default`.
macro_rules! rule_options {
    (
        $(#[$attr:meta])*
        $vis:vis struct $name:ident {
            $(
                $(#[$field_attr:meta])*
                $field_vis:vis $field:ident : $ty:ty $(=> $doc:literal)?
            ),* $(,)?
        }
    ) => {
        $(#[$attr])*
        #[derive(Clone, Debug, Default)]
        $vis struct $name {
            $( $(#[$field_attr])* $field_vis $field: $ty, )*
        }

        impl $name {
            /// The options under `rules.<id>`, for the rule's `RuleMeta::options`.
            pub const DECLARED: &'static [$crate::rule::RuleOption] = &[
                $($(
                    $crate::rule::RuleOption {
                        name: stringify!($field),
                        kind: <$ty as $crate::rule::OptionValue>::KIND,
                        doc: $doc,
                        set: Some(|options: &mut $crate::rule::TypedOptions, json: &serde_json::Value| {
                            match <$ty as $crate::rule::OptionValue>::from_json(json) {
                                Some(value) => {
                                    options.get_mut::<$name>().$field = value;
                                    true
                                }
                                None => false,
                            }
                        }),
                    },
                )?)*
            ];
        }

        impl $crate::rule::Options for $name {
            fn unset() -> &'static Self {
                static UNSET: std::sync::OnceLock<$name> = std::sync::OnceLock::new();
                UNSET.get_or_init(<$name>::default)
            }
        }
    };
}
pub(crate) use rule_options;

#[cfg(test)]
mod tests {
    use super::*;

    rule_options! {
        struct Example {
            list: Option<Vec<String>> => "a list",
            flag: bool => "a flag",
            /// A section's key: not under `rules.<id>`.
            section_key: Vec<String>,
        }
    }

    #[test]
    fn the_struct_declares_its_options_and_their_kinds() {
        let declared: Vec<(&str, OptionKind, &str)> = Example::DECLARED
            .iter()
            .map(|o| (o.name, o.kind, o.doc))
            .collect();
        assert_eq!(
            declared,
            [
                ("list", OptionKind::StringList, "a list"),
                ("flag", OptionKind::Bool, "a flag")
            ]
        );
    }

    #[test]
    fn options_are_set_by_their_kind_and_read_typed() {
        let mut typed = TypedOptions::default();
        assert!(typed.get::<Example>().list.is_none());
        let set = |typed: &mut TypedOptions, name: &str, json: serde_json::Value| {
            let option = Example::DECLARED.iter().find(|o| o.name == name).unwrap();
            (option.set.unwrap())(typed, &json)
        };
        assert!(set(&mut typed, "list", serde_json::json!(["a", "b"])));
        assert!(!set(&mut typed, "flag", serde_json::json!("yes")));
        assert!(!set(&mut typed, "list", serde_json::json!(["a", 1])));
        assert!(set(&mut typed, "flag", serde_json::json!(true)));
        typed.get_mut::<Example>().section_key.push("x".into());
        let example = typed.clone();
        let example = example.get::<Example>();
        assert_eq!(example.list.as_deref(), Some(&["a".into(), "b".into()][..]));
        assert!(example.flag);
        assert_eq!(example.section_key, ["x"]);
    }
}
