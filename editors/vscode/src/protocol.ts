// The wire types of tack's LSP extension, as docs/protocol.md describes them.

export const PERMISSION_MODES = ['plan', 'ask', 'auto_read', 'auto_all'] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

export type Decision = 'allow' | 'deny' | 'allowAlways';

/** One event; `kind` says which, the other fields depend on it. */
export interface TackEvent {
  kind: string;
  [field: string]: unknown;
}

export interface EventParams {
  conversationId: string;
  turnId: string;
  agentPath: string[];
  seq: number;
  event: TackEvent;
}

export interface ApproveToolParams {
  conversationId: string;
  turnId: string;
  agentPath: string[];
  toolCall: { id: string; name: string; input: unknown };
  reason: string;
}

/** `tack/askUser`: the model's question to the user. */
export interface AskUserParams {
  conversationId: string;
  turnId: string;
  agentPath: string[];
  toolCallId: string;
  question: string;
  choices: string[];
}

export interface AskUserResult {
  /** null when the user dismissed the question. */
  answer: string | null;
}

export interface ApproveToolResult {
  decision: Decision;
}

export interface SessionInfo {
  sessionId: string;
  title: string;
  updatedAt: string;
  messageCount: number;
}

export interface Block {
  type: string;
  text?: string;
  name?: string;
  input?: unknown;
}

export interface Message {
  role: 'user' | 'assistant';
  blocks: Block[];
}

/** Something attached to a prompt (`tack/turn`'s `attachments`). */
export interface Attachment {
  uri: string;
  /** Only these lines. */
  range?: { start: { line: number; character: number }; end: { line: number; character: number } };
  /** LSP diagnostics, attached instead of the text. */
  diagnostics?: LspDiagnostic[];
}

export interface LspDiagnostic {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  severity: number;
  source?: string | undefined;
  message: string;
}
