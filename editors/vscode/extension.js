// Starts `gitops-lint server` for YAML files; everything else happens in the server.
const { workspace } = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate() {
  const settings = workspace.getConfiguration("gitops-lint");
  const server = { command: settings.get("path"), args: ["server"] };
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
