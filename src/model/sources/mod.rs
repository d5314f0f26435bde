//! Source resolution that any deployer can reuse: Argo CD's resolver
//! (`model::argocd::resolve`) calls it, and a second deployer (Flux) would too. The files a
//! directory source reads (`directory.rs`), a chart folder's files (`helm.rs`) and kustomize
//! image overrides (`kustomize.rs`).

pub mod directory;
pub mod helm;
pub mod kustomize;
