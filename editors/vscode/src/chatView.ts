// The chat view: a webview that renders the conversation's events, takes
// prompts, answers approvals, stops turns, picks the permission mode and
// shows the context gauge. The extension side keeps the conversation and
// talks to the server; the webview only renders and reports clicks.

import * as vscode from 'vscode';
import { LanguageClient } from 'vscode-languageclient/node';

import {
  ApproveToolParams,
  ApproveToolResult,
  Attachment,
  Decision,
  LspDiagnostic,
  EventParams,
  Message,
  PermissionMode,
  PERMISSION_MODES,
} from './protocol';

interface StatusSink {
  set(state: 'starting' | 'loading' | 'ready' | 'thinking' | 'running' | 'stopped', detail?: string): void;
}

/** What the webview sends. */
type FromView =
  | { type: 'ready' }
  | { type: 'send'; text: string }
  | { type: 'stop' }
  | { type: 'approve'; id: number; decision: Decision }
  | { type: 'mode'; mode: PermissionMode }
  | { type: 'sessions' }
  | { type: 'newChat' }
  | { type: 'pickFile'; mention: boolean }
  | { type: 'addActive' }
  | { type: 'addProblems' }
  | { type: 'removeChip'; index: number }
  | { type: 'copy'; text: string }
  | { type: 'insert'; text: string };

function isFromView(value: unknown): value is FromView {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}

export class ChatView implements vscode.WebviewViewProvider {
  private view: vscode.WebviewView | undefined;
  private ready = false;
  private readonly queue: unknown[] = [];
  private conversationId: string | undefined;
  private creating: Promise<string> | undefined;
  private mode: PermissionMode | undefined;
  private nextApproval = 1;
  private readonly approvals = new Map<number, (decision: Decision) => void>();
  /** What goes with the next prompt, with the chip's label. */
  private attachments: { attachment: Attachment; label: string }[] = [];
  /** The editor the user last worked in: Insert puts code at its cursor. */
  private lastEditor: vscode.TextEditor | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly client: LanguageClient,
    private readonly status: StatusSink,
    /** The mode new conversations get from the settings. */
    private readonly defaultMode: PermissionMode,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    // markdown-it and highlight.js run in the page, from the packaged dependencies.
    const markdownIt = vscode.Uri.joinPath(this.extensionUri, 'node_modules', 'markdown-it', 'dist');
    const highlight = vscode.Uri.joinPath(this.extensionUri, 'node_modules', '@highlightjs', 'cdn-assets');
    view.webview.options = { enableScripts: true, localResourceRoots: [media, markdownIt, highlight] };
    const script = view.webview.asWebviewUri(vscode.Uri.joinPath(media, 'chat.js'));
    const style = view.webview.asWebviewUri(vscode.Uri.joinPath(media, 'chat.css'));
    const markdownScript = view.webview.asWebviewUri(vscode.Uri.joinPath(markdownIt, 'markdown-it.min.js'));
    const highlightScript = view.webview.asWebviewUri(vscode.Uri.joinPath(highlight, 'highlight.min.js'));
    const nonce = Array.from({ length: 24 }, () => Math.floor(Math.random() * 36).toString(36)).join('');
    const modes = PERMISSION_MODES.map((m) => `<option value="${m}">${m}</option>`).join('');
    view.webview.html = `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${view.webview.cspSource}; script-src 'nonce-${nonce}';">
<link rel="stylesheet" href="${style.toString()}"></head>
<body>
<header>
  <select id="mode" title="Permission mode">${modes}</select>
  <button id="sessions" title="Resume a session">Sessions</button>
  <button id="new" title="New chat">New</button>
  <meter id="gauge" min="0" max="1" value="0" title="Context used"></meter>
  <span id="usage" title="Tokens of this conversation"></span>
</header>
<main id="log" aria-live="polite"></main>
<div id="context">
  <span id="chips"></span>
  <button id="active" class="chip suggested" hidden title="Attach the active editor"></button>
  <button id="addFile" class="small" title="Attach a file (or type @ in the prompt)">+ File</button>
  <button id="addProblems" class="small" title="Attach the active file's problems">+ Problems</button>
</div>
<footer>
  <textarea id="prompt" rows="3" placeholder="Ask tack… (Enter sends, Shift+Enter for a new line, @ picks a file)"></textarea>
  <button id="send">Send</button><button id="stop" disabled>Stop</button>
</footer>
<script nonce="${nonce}" src="${markdownScript.toString()}"></script>
<script nonce="${nonce}" src="${highlightScript.toString()}"></script>
<script nonce="${nonce}" src="${script.toString()}"></script>
</body></html>`;
    view.webview.onDidReceiveMessage((message: unknown) => this.onMessage(message));
    view.onDidDispose(() => {
      this.view = undefined;
      this.ready = false;
    });
  }

  private post(message: unknown): void {
    if (this.view && this.ready) {
      void this.view.webview.postMessage(message);
    } else {
      this.queue.push(message);
    }
  }

  private onMessage(message: unknown): void {
    if (!isFromView(message)) {
      return;
    }
    switch (message.type) {
      case 'ready':
        this.ready = true;
        for (const queued of this.queue.splice(0)) {
          void this.view?.webview.postMessage(queued);
        }
        this.post({ type: 'mode', mode: this.mode ?? this.defaultMode });
        this.postChips();
        this.onActiveEditor(vscode.window.activeTextEditor);
        break;
      case 'send':
        void this.send(message.text);
        break;
      case 'stop':
        void this.cancel();
        break;
      case 'approve': {
        const resolve = this.approvals.get(message.id);
        this.approvals.delete(message.id);
        resolve?.(message.decision);
        break;
      }
      case 'mode':
        void this.setMode(message.mode);
        break;
      case 'sessions':
        void vscode.commands.executeCommand('tack.resumeSession');
        break;
      case 'newChat':
        this.newChat();
        break;
      case 'pickFile':
        void this.pickFile(message.mention);
        break;
      case 'addActive':
        if (this.lastEditor) {
          this.attachDocument(this.lastEditor.document.uri);
        }
        break;
      case 'addProblems':
        this.addProblems();
        break;
      case 'removeChip':
        this.attachments.splice(message.index, 1);
        this.postChips();
        break;
      case 'copy':
        void vscode.env.clipboard.writeText(message.text);
        break;
      case 'insert':
        void this.insert(message.text);
        break;
    }
  }

  // ------------------------------------------------------------ context

  private relative(uri: vscode.Uri): string {
    return vscode.workspace.asRelativePath(uri, false);
  }

  private attach(attachment: Attachment, label: string): void {
    this.attachments.push({ attachment, label });
    this.postChips();
    void vscode.commands.executeCommand('tack.chat.focus');
  }

  private postChips(): void {
    this.post({ type: 'chips', chips: this.attachments.map((a) => a.label) });
  }

  private attachDocument(uri: vscode.Uri): void {
    this.attach({ uri: uri.toString() }, this.relative(uri));
  }

  /** The editor's selection, or its whole file when nothing is selected. */
  addSelection(): void {
    const editor = vscode.window.activeTextEditor ?? this.lastEditor;
    if (!editor) {
      void vscode.window.showInformationMessage('tack: open a file to attach its selection');
      return;
    }
    const selection = editor.selection;
    if (selection.isEmpty) {
      this.attachDocument(editor.document.uri);
      return;
    }
    // A selection of whole lines ends at the start of the next one: that line is not in it.
    let end = selection.end;
    if (end.character === 0 && end.line > selection.start.line) {
      end = editor.document.lineAt(end.line - 1).range.end;
    }
    const range = {
      start: { line: selection.start.line, character: selection.start.character },
      end: { line: end.line, character: end.character },
    };
    const label = `${this.relative(editor.document.uri)}:${selection.start.line + 1}-${end.line + 1}`;
    this.attach({ uri: editor.document.uri.toString(), range }, label);
  }

  async addFile(uri?: vscode.Uri): Promise<void> {
    if (uri) {
      this.attachDocument(uri);
      return;
    }
    await this.pickFile(false);
  }

  /** The workspace's files in a quick pick; `mention` puts `@path` in the
   * prompt (the server attaches files a prompt names) instead of a chip. */
  private async pickFile(mention: boolean): Promise<void> {
    const files = await vscode.workspace.findFiles('**/*', '**/{node_modules,target,.git}/**', 5000);
    const picked = await vscode.window.showQuickPick(
      files.map((file) => ({ label: this.relative(file), uri: file })).sort((a, b) => a.label.localeCompare(b.label)),
      { placeHolder: 'Attach a file to the prompt' },
    );
    if (!picked) {
      return;
    }
    if (mention) {
      this.post({ type: 'mention', text: `@${picked.label} ` });
    } else {
      this.attachDocument(picked.uri);
    }
  }

  /** The active file's diagnostics, as the protocol carries them. */
  addProblems(): void {
    const editor = vscode.window.activeTextEditor ?? this.lastEditor;
    if (!editor) {
      void vscode.window.showInformationMessage('tack: open a file to attach its problems');
      return;
    }
    const uri = editor.document.uri;
    const diagnostics: LspDiagnostic[] = vscode.languages.getDiagnostics(uri).map((d) => ({
      range: {
        start: { line: d.range.start.line, character: d.range.start.character },
        end: { line: d.range.end.line, character: d.range.end.character },
      },
      // VS Code counts severities from 0 (Error); LSP from 1.
      severity: d.severity + 1,
      source: d.source,
      message: d.message,
    }));
    if (diagnostics.length === 0) {
      void vscode.window.showInformationMessage(`tack: ${this.relative(uri)} has no problems to attach`);
      return;
    }
    this.attach({ uri: uri.toString(), diagnostics }, `${this.relative(uri)} (${diagnostics.length} problems)`);
  }

  /** Offers the active editor's file as a chip to click. */
  onActiveEditor(editor: vscode.TextEditor | undefined): void {
    if (editor && editor.document.uri.scheme === 'file') {
      this.lastEditor = editor;
      this.post({ type: 'active', label: this.relative(editor.document.uri) });
    }
  }

  private async insert(text: string): Promise<void> {
    const editor = this.lastEditor;
    if (!editor) {
      void vscode.window.showInformationMessage('tack: open a file to insert the code into');
      return;
    }
    await vscode.window.showTextDocument(editor.document, editor.viewColumn);
    await editor.edit((edit) => edit.replace(editor.selection, text));
  }

  private async request<R>(method: string, params: object): Promise<R | undefined> {
    try {
      return await this.client.sendRequest<R>(method, params);
    } catch (error) {
      const text = error instanceof Error ? error.message : String(error);
      this.post({ type: 'notice', text: `${method}: ${text}` });
      void vscode.window.showErrorMessage(`tack: ${method}: ${text}`);
      return undefined;
    }
  }

  /** The chat's conversation, started on first use. */
  async conversation(): Promise<string> {
    if (this.conversationId) {
      return this.conversationId;
    }
    if (!this.creating) {
      this.status.set('loading');
      this.creating = (async () => {
        const params = this.mode ? { permissionMode: this.mode } : {};
        const created = await this.client.sendRequest<{ conversationId: string }>('tack/newConversation', params);
        this.conversationId = created.conversationId;
        return created.conversationId;
      })().finally(() => {
        this.creating = undefined;
        this.status.set('ready');
      });
    }
    return this.creating;
  }

  async send(text: string): Promise<void> {
    if (!text.trim()) {
      return;
    }
    const attached = this.attachments.splice(0);
    this.postChips();
    this.post({ type: 'user', text, chips: attached.map((a) => a.label) });
    try {
      const conversationId = await this.conversation();
      const params: { conversationId: string; prompt: string; attachments?: Attachment[] } = { conversationId, prompt: text };
      if (attached.length > 0) {
        params.attachments = attached.map((a) => a.attachment);
      }
      const started = await this.request<{ turnId: string }>('tack/turn', params);
      if (started) {
        this.post({ type: 'busy', busy: true });
      }
    } catch (error) {
      this.post({ type: 'notice', text: `tack: ${error instanceof Error ? error.message : String(error)}` });
    }
  }

  async cancel(): Promise<void> {
    if (this.conversationId) {
      await this.request('tack/cancel', { conversationId: this.conversationId });
    }
  }

  newChat(): void {
    this.conversationId = undefined;
    this.post({ type: 'reset' });
  }

  async resume(sessionId: string): Promise<void> {
    const resumed = await this.request<{ conversationId: string; messages: Message[] }>('tack/resume', { sessionId });
    if (resumed) {
      this.conversationId = resumed.conversationId;
      this.post({ type: 'reset' });
      this.post({ type: 'replay', messages: resumed.messages });
    }
  }

  async setMode(mode: PermissionMode): Promise<void> {
    this.mode = mode;
    this.post({ type: 'mode', mode });
    if (this.conversationId) {
      await this.request('tack/setPermissionMode', { conversationId: this.conversationId, permissionMode: mode });
    }
  }

  onEvent(params: EventParams): void {
    if (params.conversationId !== this.conversationId) {
      return;
    }
    const event = params.event;
    if (event.kind === 'status' && params.agentPath.length === 0) {
      const state = event.status === 'thinking' ? 'thinking' : event.status === 'running_tool' ? 'running' : 'ready';
      this.status.set(state);
    }
    if (event.kind === 'turn_finished' && params.agentPath.length === 0) {
      this.post({ type: 'busy', busy: false });
    }
    this.post({ type: 'event', params });
  }

  /** Shows the question in the chat and waits for the click. */
  askApproval(params: ApproveToolParams): Promise<ApproveToolResult> {
    const id = this.nextApproval++;
    void vscode.commands.executeCommand('tack.chat.focus');
    return new Promise((resolve) => {
      this.approvals.set(id, (decision) => resolve({ decision }));
      this.post({ type: 'approval', id, params });
    });
  }
}
