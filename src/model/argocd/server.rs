//! How argocd-server reads its settings: the ConfigMap of its command parameters and the
//! truthiness of its flag and environment.

/// The ConfigMap Argo CD reads its components' command parameters from
/// (`server.insecure`, ...).
pub const PARAMS_CM: &str = "argocd-cmd-params-cm";

pub fn is_true(text: &str) -> bool {
    // Argo CD reads `ARGOCD_SERVER_INSECURE` with `strings.EqualFold(val, "true")`.
    text.trim().eq_ignore_ascii_case("true")
}

/// `--insecure`, `--insecure=true` (Go `strconv.ParseBool`).
pub fn is_insecure_flag(arg: &str) -> bool {
    match arg.trim().split_once('=') {
        None => arg.trim() == "--insecure",
        Some((flag, v)) => {
            flag == "--insecure" && matches!(v, "1" | "t" | "T" | "true" | "TRUE" | "True")
        }
    }
}
