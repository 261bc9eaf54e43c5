// The kdsl extension: starts `kdslc lsp` for .kdsl files and restarts it
// when `kdsl.server.path` changes. Highlighting, brackets and comments come
// from the static files next to package.json; everything else (diagnostics,
// quick fixes, hover, go-to-definition, outline) from the server.

import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  TransportKind,
} from "vscode-languageclient/node";

let client: LanguageClient | undefined;

function serverPath(): string {
  const configured = vscode.workspace.getConfiguration("kdsl").get<string>("server.path");
  return configured && configured.trim() !== "" ? configured : "kdslc";
}

async function start(context: vscode.ExtensionContext): Promise<void> {
  const command = serverPath();
  // The same command whether debugging the extension or not: the server
  // speaks LSP on stdin/stdout.
  const serverOptions: ServerOptions = {
    run: { command, args: ["lsp"], transport: TransportKind.stdio },
    debug: { command, args: ["lsp"], transport: TransportKind.stdio },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "kdsl" },
      { scheme: "untitled", language: "kdsl" },
    ],
    // Imports are read from disk, so saved changes to any .kdsl file can
    // change the diagnostics of the open ones.
    // Checked for this target, as `kdslc --target`.
    initializationOptions: {
      target: vscode.workspace.getConfiguration("kdsl").get<string>("target") ?? "sm_90",
    },
    synchronize: {
      fileEvents: vscode.workspace.createFileSystemWatcher("**/*.kdsl"),
    },
  };
  client = new LanguageClient("kdsl", "kdsl", serverOptions, clientOptions);
  try {
    await client.start();
  } catch (e) {
    client = undefined;
    void vscode.window.showErrorMessage(
      `kdsl: could not start \`${command} lsp\` (${e}). ` +
        "Install kdslc (`cargo install --path .` in the kdsl repository) or set `kdsl.server.path`."
    );
  }
  context.subscriptions.push({ dispose: () => void client?.stop() });
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration("kdsl.server.path") || event.affectsConfiguration("kdsl.target")) {
        await client?.stop();
        await start(context);
      }
    }),
    vscode.commands.registerCommand("kdsl.restartServer", async () => {
      await client?.stop();
      await start(context);
    })
  );
  await start(context);
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
