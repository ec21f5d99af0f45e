// Starts `rulesdsl lsp` (setting rulesdsl.command) for .rules files; everything else is the server's.
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const [command, ...args] = vscode.workspace.getConfiguration("rulesdsl").get("command");
  client = new LanguageClient(
    "rulesdsl",
    "rulesdsl",
    { command, args },
    {
      documentSelector: [{ scheme: "file", language: "rules" }],
      synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher("**/*.rules") },
    },
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
