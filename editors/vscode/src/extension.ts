// tack for VS Code: starts `tack lsp`, shows the conversation in a chat view,
// answers approvals there, and leaves edits to VS Code's own refactor preview
// (the server marks every hunk `needsConfirmation`). The server does the work.

import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import {
  ExecuteCommandSignature,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
} from 'vscode-languageclient/node';

import { ChatView } from './chatView';
import {
  ApproveToolParams,
  ApproveToolResult,
  AskUserParams,
  AskUserResult,
  EventParams,
  PermissionMode,
  PERMISSION_MODES,
  SessionInfo,
} from './protocol';

let client: LanguageClient | undefined;

/** The server binary: the setting, else `tack` on PATH, else where `cargo
 * install` puts it, else the release build of the checkout this extension
 * sits in. `found` is false (and `tried` says where it looked) when none is. */
function serverPath(context: vscode.ExtensionContext): { command: string; found: boolean; tried: string[] } {
  const configured = vscode.workspace.getConfiguration('tack').get<string>('serverPath', '');
  if (configured) {
    return { command: configured, found: fs.existsSync(configured), tried: [configured] };
  }
  const candidates = [
    ...(process.env.PATH ?? '').split(path.delimiter).filter((dir) => dir).map((dir) => path.join(dir, 'tack')),
    path.join(os.homedir(), '.cargo', 'bin', 'tack'),
    path.join(context.extensionPath, '..', '..', 'target', 'release', 'tack'),
  ];
  const found = candidates.find((candidate) => fs.existsSync(candidate));
  return { command: found ?? 'tack', found: found !== undefined, tried: ['tack on PATH', ...candidates.slice(-2)] };
}

/** Says what to do when there is no binary, with the way to fix it one click away. */
async function reportMissingBinary(tried: string[]): Promise<void> {
  const settings = 'Set tack.serverPath';
  const guide = 'Get started';
  const choice = await vscode.window.showErrorMessage(
    `tack: the tack binary was not found (looked at ${tried.join(', ')}). Install it from a tack checkout with ` +
      '`cargo install --path .`, or set its path.',
    settings,
    guide,
  );
  if (choice === settings) {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'tack.serverPath');
  } else if (choice === guide) {
    await vscode.commands.executeCommand('workbench.action.openWalkthrough', 'tack.tack#tack.start', false);
  }
}

class Status {
  private readonly item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 100);

  constructor() {
    this.item.command = 'tack.chat.focus';
    this.set('starting');
    this.item.show();
  }

  set(state: 'starting' | 'loading' | 'ready' | 'thinking' | 'running' | 'stopped', detail?: string): void {
    const text: Record<typeof state, string> = {
      starting: '$(loading~spin) tack',
      loading: '$(loading~spin) tack: loading the model',
      ready: '$(check) tack',
      thinking: '$(loading~spin) tack: thinking',
      running: '$(gear~spin) tack: running a tool',
      stopped: '$(error) tack',
    };
    this.item.text = detail ? `${text[state]} ${detail}` : text[state];
    this.item.tooltip = `tack: ${state}`;
  }

  dispose(): void {
    this.item.dispose();
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const status = new Status();
  context.subscriptions.push(status);
  const output = vscode.window.createOutputChannel('tack');
  context.subscriptions.push(output);

  const binary = serverPath(context);
  const command = binary.command;
  const serverOptions: ServerOptions = { command, args: ['lsp'] };
  const initializationOptions = vscode.workspace.getConfiguration('tack').get<object>('initializationOptions', {});
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
    initializationOptions,
    outputChannel: output,
    middleware: {
      // Code actions report into the chat's conversation; "Ask tack…" needs the question.
      executeCommand: async (name: string, args: unknown[], next: ExecuteCommandSignature) => {
        if (name !== 'tack.codeAction') {
          return next(name, args) as unknown;
        }
        const first = (args[0] ?? {}) as Record<string, unknown>;
        if (first.action === 'ask' && first.prompt === undefined) {
          const question = await vscode.window.showInputBox({ prompt: 'Ask tack about the selection' });
          if (!question) {
            return undefined;
          }
          first.prompt = question;
        }
        first.conversationId = await view.conversation();
        await vscode.commands.executeCommand('tack.chat.focus');
        return next(name, [first]) as unknown;
      },
    },
  };
  client = new LanguageClient('tack', 'tack', serverOptions, clientOptions);
  const lsp = client;
  const configured = (initializationOptions as { permissionMode?: unknown }).permissionMode;
  const defaultMode = PERMISSION_MODES.find((mode) => mode === configured) ?? 'auto_read';
  const view = new ChatView(context.extensionUri, lsp, status, defaultMode);
  context.subscriptions.push(vscode.window.registerWebviewViewProvider('tack.chat', view));

  lsp.onDidChangeState((change) => {
    if (change.newState === State.Running) {
      status.set('ready');
    } else if (change.newState === State.Stopped) {
      status.set('stopped');
    }
  });

  context.subscriptions.push(
    vscode.commands.registerCommand('tack.newChat', () => view.newChat()),
    vscode.commands.registerCommand('tack.cancel', () => view.cancel()),
    vscode.commands.registerCommand('tack.resumeSession', async () => {
      const sessions = await lsp.sendRequest<SessionInfo[]>('tack/sessions', {});
      const picked = await vscode.window.showQuickPick(
        sessions.map((s) => ({ label: s.title || '(untitled)', description: s.updatedAt, detail: `${s.messageCount} messages`, id: s.sessionId })),
        { placeHolder: 'Resume a tack session' },
      );
      if (picked) {
        await view.resume(picked.id);
      }
    }),
    vscode.commands.registerCommand('tack.addSelection', () => view.addSelection()),
    vscode.commands.registerCommand('tack.addFile', (uri?: vscode.Uri) => view.addFile(uri)),
    vscode.commands.registerCommand('tack.addProblems', () => view.addProblems()),
    vscode.window.onDidChangeActiveTextEditor((editor) => view.onActiveEditor(editor)),
    vscode.commands.registerCommand('tack.setPermissionMode', async () => {
      const mode = await vscode.window.showQuickPick([...PERMISSION_MODES], { placeHolder: 'Permission mode' });
      if (mode) {
        await view.setMode(mode as PermissionMode);
      }
    }),
  );

  lsp.onNotification('tack/event', (params: EventParams) => view.onEvent(params));
  lsp.onRequest('tack/approveTool', (params: ApproveToolParams): Promise<ApproveToolResult> => view.askApproval(params));
  lsp.onRequest('tack/askUser', (params: AskUserParams): Promise<AskUserResult> => askUser(params));

  view.onActiveEditor(vscode.window.activeTextEditor);
  if (!binary.found) {
    status.set('stopped');
    void reportMissingBinary(binary.tried);
    return;
  }
  try {
    await lsp.start();
  } catch (error) {
    status.set('stopped');
    void vscode.window.showErrorMessage(`tack: cannot start ${command} lsp: ${String(error)}`);
  }
}

/** The model's question (AskUser): a quick pick of its choices, with a way to
 * answer in one's own words, or an input box when it offers none. */
async function askUser(params: AskUserParams): Promise<AskUserResult> {
  const title = params.agentPath.length > 0 ? `tack [${params.agentPath.join('/')}]` : 'tack';
  const own = 'Answer in my own words…';
  let answer: string | undefined;
  if (params.choices.length > 0) {
    answer = await vscode.window.showQuickPick([...params.choices, own], {
      title,
      placeHolder: params.question,
      ignoreFocusOut: true,
    });
  }
  if (params.choices.length === 0 || answer === own) {
    answer = await vscode.window.showInputBox({ title, prompt: params.question, ignoreFocusOut: true });
  }
  return { answer: answer && answer.trim() !== '' ? answer : null };
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
