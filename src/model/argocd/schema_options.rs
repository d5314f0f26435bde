//! Values Argo CD reads from strings: sync options, compare options, hook annotations.
//!
//! Facts from Argo CD's sources (gitops-engine `pkg/sync/common/types.go`, `common/common.go`,
//! `controller/hook.go`) and `docs/user-guide/{sync-options,compare-options,sync-waves}.md`.
//! Argo CD compares these strings exactly: `createNamespace=true` is silently ignored.

use super::schema::Version;

/// A `Name=value` option and the values Argo CD acts on.
#[derive(Debug)]
pub struct OptionSpec {
    pub name: &'static str,
    pub values: &'static [&'static str],
    /// Only as a resource annotation (`Prune=confirm`), not in `spec.syncPolicy.syncOptions`.
    pub annotation_only: bool,
}

const BOOL: &[&str] = &["true", "false"];

const fn opt(name: &'static str, values: &'static [&'static str]) -> OptionSpec {
    OptionSpec {
        name,
        values,
        annotation_only: false,
    }
}

/// Sync options: `spec.syncPolicy.syncOptions` entries and the comma-separated
/// `argocd.argoproj.io/sync-options` annotation.
pub static SYNC_OPTIONS: &[OptionSpec] = &[
    opt("ApplyOutOfSyncOnly", BOOL),
    opt("ClientSideApplyMigration", BOOL),
    opt("CreateNamespace", BOOL),
    OptionSpec {
        name: "Delete",
        values: &["false", "confirm", "true"],
        annotation_only: true,
    },
    opt("FailOnSharedResource", BOOL),
    opt("Force", BOOL),
    OptionSpec {
        name: "Prune",
        values: &["false", "confirm", "true"],
        annotation_only: true,
    },
    opt("PruneLast", BOOL),
    opt(
        "PrunePropagationPolicy",
        &["foreground", "background", "orphan"],
    ),
    opt("Replace", BOOL),
    opt("RespectIgnoreDifferences", BOOL),
    opt("ServerSideApply", BOOL),
    opt("SkipDryRunOnMissingResource", BOOL),
    opt("Validate", BOOL),
];

/// Compare options of the `argocd.argoproj.io/compare-options` annotation; `IgnoreExtraneous`
/// takes no value.
pub static COMPARE_OPTIONS: &[OptionSpec] = &[
    opt("IgnoreExtraneous", &[]),
    opt("IncludeMutationWebhook", BOOL),
    opt("ServerSideDiff", BOOL),
];

pub const HOOK: &str = "argocd.argoproj.io/hook";
pub const HOOK_DELETE_POLICY: &str = "argocd.argoproj.io/hook-delete-policy";
pub const SYNC_WAVE: &str = "argocd.argoproj.io/sync-wave";
pub const SYNC_OPTIONS_ANNOTATION: &str = "argocd.argoproj.io/sync-options";
pub const COMPARE_OPTIONS_ANNOTATION: &str = "argocd.argoproj.io/compare-options";

/// Hook types of `argocd.argoproj.io/hook` (comma-separated), with the version that added
/// each one when it is newer than the oldest modelled version.
pub static HOOK_TYPES: &[(&str, Option<Version>)] = &[
    ("PreSync", None),
    ("Sync", None),
    ("PostSync", None),
    ("SyncFail", None),
    ("Skip", None),
    ("PostDelete", None),
    ("PreDelete", Some(Version { major: 3, minor: 3 })),
];

/// Values of `argocd.argoproj.io/hook-delete-policy` (comma-separated).
pub static HOOK_DELETE_POLICIES: &[&str] = &["HookSucceeded", "HookFailed", "BeforeHookCreation"];

/// Every `argocd.argoproj.io/` annotation and label key Argo CD reads (for "did you mean").
pub static KNOWN_KEYS: &[&str] = &[
    "argocd.argoproj.io/application-set-refresh",
    "argocd.argoproj.io/auto-label-cluster-info",
    "argocd.argoproj.io/client-side-apply-migration-manager",
    "argocd.argoproj.io/compare-options",
    "argocd.argoproj.io/deletion-approved",
    "argocd.argoproj.io/hook",
    "argocd.argoproj.io/hook-delete-policy",
    "argocd.argoproj.io/hook-finalizer",
    "argocd.argoproj.io/hydrate",
    "argocd.argoproj.io/ignore-default-links",
    "argocd.argoproj.io/ignore-healthcheck",
    "argocd.argoproj.io/ignore-resource-updates",
    "argocd.argoproj.io/installation-id",
    "argocd.argoproj.io/instance",
    "argocd.argoproj.io/kubernetes-version",
    "argocd.argoproj.io/managed-by",
    "argocd.argoproj.io/managed-by-url",
    "argocd.argoproj.io/manifest-generate-paths",
    "argocd.argoproj.io/refresh",
    "argocd.argoproj.io/secret-type",
    "argocd.argoproj.io/skip-reconcile",
    "argocd.argoproj.io/sync-options",
    "argocd.argoproj.io/sync-wave",
    "argocd.argoproj.io/tracking-id",
];

/// The option named `name` in `options`.
#[must_use]
pub fn find_option<'a>(options: &'a [OptionSpec], name: &str) -> Option<&'a OptionSpec> {
    options.iter().find(|o| o.name == name)
}

/// Fields that make Argo CD delete resources once it reads them: `prune` and `allowEmpty`
/// (automated sync deletes what Git no longer has, even everything), and the
/// `resources-finalizer.argocd.argoproj.io` finalizer in `finalizers` (deleting the
/// Application deletes what it deployed).
const DELETING_FIELDS: [&str; 2] = ["prune", "allowEmpty"];
const RESOURCES_FINALIZER: &str = "resources-finalizer.argocd.argoproj.io";

/// Whether `value`, once Argo CD reads it under the field `name` (a misspelled key renamed to
/// `name`, say), can make Argo CD delete resources: `prune` or `allowEmpty` that is not
/// `false`, a `finalizers` list with the resources finalizer, or a mapping holding one of them
/// (`automated: {prune: true}`, `syncPolicy: {...}`).
#[must_use]
pub fn deletes_when_read(name: &str, value: &crate::yaml::Node) -> bool {
    if DELETING_FIELDS.contains(&name) {
        return value.as_bool() != Some(false);
    }
    if name == "finalizers" {
        return value.items().any(|i| {
            i.scalar_text()
                .is_some_and(|s| s.starts_with(RESOURCES_FINALIZER))
        });
    }
    value.entries().any(|e| {
        e.key
            .scalar_text()
            .is_some_and(|k| deletes_when_read(k, &e.value))
    })
}
