//! Starts `gitops-lint server` for YAML files; everything else happens in the server.

use zed_extension_api::{self as zed, settings::LspSettings, LanguageServerId, Result};

const SERVER: &str = "gitops-lint";

struct GitopsLint;

impl zed::Extension for GitopsLint {
    fn new() -> Self {
        GitopsLint
    }

    /// `lsp.gitops-lint.binary` from the settings if given, else `gitops-lint` from `PATH`.
    fn language_server_command(
        &mut self,
        _language_server_id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<zed::Command> {
        let binary = LspSettings::for_worktree(SERVER, worktree)
            .ok()
            .and_then(|s| s.binary);
        let configured = binary.as_ref().and_then(|b| b.path.clone());
        let command = match configured.or_else(|| worktree.which(SERVER)) {
            Some(path) => path,
            None => {
                return Err(
                    "gitops-lint is not on PATH: install it (`pip install gitops-lint`) or set `lsp.gitops-lint.binary.path`"
                        .into(),
                )
            }
        };
        let args = binary
            .as_ref()
            .and_then(|b| b.arguments.clone())
            .unwrap_or_else(|| vec!["server".into()]);
        let mut env = worktree.shell_env();
        if let Some(extra) = binary.and_then(|b| b.env) {
            env.extend(extra);
        }
        Ok(zed::Command { command, args, env })
    }

    /// `lsp.gitops-lint.initialization_options`: `{"config": ..., "policy": [...]}`.
    fn language_server_initialization_options(
        &mut self,
        _language_server_id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<Option<zed::serde_json::Value>> {
        Ok(LspSettings::for_worktree(SERVER, worktree)
            .ok()
            .and_then(|s| s.initialization_options))
    }
}

zed::register_extension!(GitopsLint);
