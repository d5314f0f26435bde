// Starts `gitops-lint server` for YAML files; everything else happens in the server.
const fs = require("fs");
const path = require("path");
const { workspace } = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

// The binary the platform's package bundles (`bin/`, see package-target), unless the
// `gitops-lint.path` setting names another; without either, the one on PATH.
function serverCommand(context, configured) {
  if (configured && configured !== "gitops-lint") {
    return configured;
  }
  const name = process.platform === "win32" ? "gitops-lint.exe" : "gitops-lint";
  const bundled = path.join(context.extensionPath, "bin", name);
  return fs.existsSync(bundled) ? bundled : "gitops-lint";
}

function activate(context) {
  const settings = workspace.getConfiguration("gitops-lint");
  const server = { command: serverCommand(context, settings.get("path")), args: ["server"] };
  client = new LanguageClient(
    "gitops-lint",
    "gitops-lint",
    { run: server, debug: server },
    {
      documentSelector: [{ scheme: "file", language: "yaml" }],
      initializationOptions: {
        config: settings.get("config") || undefined,
        policy: settings.get("policy"),
      },
      // Re-lint when the configuration, a policy or a file changes on disk.
      synchronize: {
        fileEvents: workspace.createFileSystemWatcher("**/{*.yaml,*.yml,*.rego,Kustomization}"),
      },
    },
  );
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
