// The tenx extension's client: starts `tenxc lsp` (the language server of the tenx compiler)
// over stdio for every `.tenx` file, and restarts it when asked or when its settings change.
// Highlighting, brackets and comments need no server: they come from the grammar and the
// language configuration this extension contributes.
"use strict";

const path = require("node:path");
const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

/** @type {LanguageClient | undefined} */
let client;
/** @type {vscode.OutputChannel | undefined} */
let output;

/**
 * The command and arguments that start the server, from the `tenx.server.*` settings:
 * `tenxc lsp` by default. `${workspaceFolder}` and a leading `~` are expanded in the path, and a
 * relative path with a slash is taken from the first workspace folder.
 */
function serverCommand() {
  const config = vscode.workspace.getConfiguration("tenx");
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  let command = String(config.get("server.path") || "tenxc").trim();
  if (folder) command = command.replaceAll("${workspaceFolder}", folder);
  if (command.startsWith("~/")) command = path.join(require("node:os").homedir(), command.slice(2));
  if (folder && !path.isAbsolute(command) && /[\\/]/.test(command)) command = path.join(folder, command);
  const extra = config.get("server.extraArgs");
  const args = ["lsp", ...(Array.isArray(extra) ? extra.map(String) : [])];
  return { command, args };
}

/** Creates and starts the client; reports a server that cannot be started once, with a fix. */
async function start() {
  const { command, args } = serverCommand();
  output ??= vscode.window.createOutputChannel("tenx");
  const run = { command, args, transport: TransportKind.stdio };
  const serverOptions = { run, debug: run };
  const clientOptions = {
    documentSelector: [
      { scheme: "file", language: "tenx" },
      { scheme: "untitled", language: "tenx" },
    ],
    synchronize: {
      // Imports and `tenx.toml` ([lints], [fmt]) change what the server reports.
      fileEvents: vscode.workspace.createFileSystemWatcher("**/{*.tenx,tenx.toml}"),
    },
    outputChannel: output,
    traceOutputChannel: output,
  };
  client = new LanguageClient("tenx", "tenx language server", serverOptions, clientOptions);
  try {
    await client.start();
    output.appendLine(`started: ${command} ${args.join(" ")}`);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    output.appendLine(`could not start ${command} ${args.join(" ")}: ${message}`);
    const choice = await vscode.window.showErrorMessage(
      `tenx: could not start the language server \`${command} ${args.join(" ")}\` (${message}). ` +
        "Install tenxc (cargo install --path compiler/cli) or set `tenx.server.path`.",
      "Open settings",
    );
    if (choice === "Open settings") {
      await vscode.commands.executeCommand("workbench.action.openSettings", "tenx.server.path");
    }
    client = undefined;
  }
}

async function stop() {
  const running = client;
  client = undefined;
  if (running) {
    try {
      await running.stop();
    } catch (error) {
      output?.appendLine(`stopping the server: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

async function restart() {
  await stop();
  await start();
}

/** @param {vscode.ExtensionContext} context */
async function activate(context) {
  context.subscriptions.push(
    vscode.commands.registerCommand("tenx.restartServer", restart),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("tenx.server")) restart();
    }),
    { dispose: () => void stop() },
  );
  await start();
}

function deactivate() {
  return stop();
}

module.exports = { activate, deactivate, serverCommand };
