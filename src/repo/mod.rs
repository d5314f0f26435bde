//! The repository tier, below the model: the files and documents as read, their
//! classification, and the Helm values tree (YAML with spans). It knows no rule and no
//! deployer's facts; the model computes those from it.

pub mod document;
pub mod values;

pub use document::{
    DocKind, Document, Field, KUSTOMIZATION_FILE_NAMES, KeptValues, VALUES_KEYS_READ_WHOLE,
    classify, is_argocd_kind, is_kustomization_kind, is_values_file_name,
};
