// The chat view: a webview that renders the conversation's events, takes
// prompts, answers approvals, stops turns, picks the permission mode and
// shows the context gauge. The extension side keeps the conversation and
// talks to the server; the webview only renders and reports clicks.

import * as vscode from 'vscode';
import { LanguageClient } from 'vscode-languageclient/node';

import {
  ApproveToolParams,
  ApproveToolResult,
  Decision,
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
  | { type: 'newChat' };

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
    view.webview.options = { enableScripts: true, localResourceRoots: [media] };
    const script = view.webview.asWebviewUri(vscode.Uri.joinPath(media, 'chat.js'));
    const style = view.webview.asWebviewUri(vscode.Uri.joinPath(media, 'chat.css'));
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
</header>
<main id="log" aria-live="polite"></main>
<footer>
  <textarea id="prompt" rows="3" placeholder="Ask tack… (Enter sends, Shift+Enter for a new line)"></textarea>
  <button id="send">Send</button><button id="stop" disabled>Stop</button>
</footer>
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
    }
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
    this.post({ type: 'user', text });
    try {
      const conversationId = await this.conversation();
      const started = await this.request<{ turnId: string }>('tack/turn', { conversationId, prompt: text });
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
