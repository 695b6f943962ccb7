// Drives `tack acp` with the official ACP client library
// (@agentclientprotocol/sdk), which checks every message against the
// protocol's schema: initialize, a session, a prompt whose turn reads a file
// (the client serves its unsaved buffer), runs a command and edits the file
// (both asked through session/request_permission, the edit with its diff),
// the edit written through the client, then a second prompt cancelled while
// its command runs. Prints the transcript as JSON lines on stdout; exits 1
// with the reason on stderr when a check fails.
//
// Environment: TACK_BIN (the binary), TACK_ACP_SDK (a folder whose
// node_modules holds the SDK), TACK_ACP_WORKSPACE (the workspace).

import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import fs from 'node:fs';
import { Readable, Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';

const require = createRequire(path.join(process.env.TACK_ACP_SDK, 'package.json'));
const acp = await import(pathToFileURL(require.resolve('@agentclientprotocol/sdk')).href);
const workspace = process.env.TACK_ACP_WORKSPACE;
const greet = path.join(workspace, 'greet.py');

// The editor's buffer of greet.py: an unsaved line the disk does not have.
const buffers = new Map([[greet, fs.readFileSync(greet, 'utf8') + '# unsaved note\n']]);
const transcript = [];
const updates = [];
const permissions = [];
const writes = [];
const reads = [];
function check(condition, message) {
  if (!condition) {
    process.stderr.write(`FAIL: ${message}\n${JSON.stringify(transcript, null, 1).slice(0, 6000)}\n`);
    process.exit(1);
  }
}

const agentProcess = spawn(process.env.TACK_BIN, ['acp'], { cwd: workspace, stdio: ['pipe', 'pipe', 'inherit'] });
const stream = acp.ndJsonStream(Writable.toWeb(agentProcess.stdin), Readable.toWeb(agentProcess.stdout));

let onUpdate = () => {};
const app = acp
  .client({ name: 'tack-tests' })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    updates.push(params.update);
    transcript.push({ update: params.update });
    onUpdate(params.update);
  })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    permissions.push(params);
    transcript.push({ permission: params });
    return { outcome: { outcome: 'selected', optionId: 'allow' } };
  })
  .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
    reads.push(params.path);
    const text = buffers.get(params.path) ?? fs.readFileSync(params.path, 'utf8');
    return { content: text };
  })
  .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
    writes.push(params);
    transcript.push({ write: params });
    buffers.set(params.path, params.content);
    return {};
  });

await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
  });
  transcript.push({ initialize: init });
  check(init.protocolVersion === 1, 'the agent speaks protocol 1');

  const session = await ctx.request(acp.methods.agent.session.new, { cwd: workspace, mcpServers: [] });
  transcript.push({ session });
  check(typeof session.sessionId === 'string', 'a session id');
  check(session.modes.availableModes.some((m) => m.id === 'auto_all'), 'the permission modes are offered');

  const first = await ctx.request(acp.methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [{ type: 'text', text: 'Fix the greeting in' }, { type: 'resource_link', uri: pathToFileURL(greet).href, name: 'greet.py' }],
  });
  transcript.push({ prompt: first });
  check(first.stopReason === 'end_turn', `the first turn ends with end_turn, not ${first.stopReason}`);

  const text = updates.filter((u) => u.sessionUpdate === 'agent_message_chunk').map((u) => u.content.text).join('');
  check(text.includes('Fixed the greeting.'), `the answer streams: ${text}`);
  const calls = updates.filter((u) => u.sessionUpdate === 'tool_call');
  check(['read', 'execute', 'edit'].every((kind) => calls.some((c) => c.kind === kind)), 'read, execute and edit calls are announced');
  const read = updates.find((u) => u.sessionUpdate === 'tool_call_update' && u.status === 'completed' &&
    u.content?.[0]?.content?.text?.includes('# unsaved note'));
  check(read, 'the Read result shows the unsaved buffer, read through fs/read_text_file');
  check(reads.includes(greet), 'the agent asked the client for greet.py');
  const diff = updates.find((u) => u.sessionUpdate === 'tool_call_update' && u.content?.some((c) => c.type === 'diff'));
  check(diff && diff.content[0].newText.includes('Hello'), 'the edit shows as a diff on its call');
  check(permissions.length === 2, `two permission requests (the command, the edit), not ${permissions.length}`);
  check(permissions[0].toolCall.kind === 'execute', 'the command is asked about');
  check(permissions[1].toolCall.content?.[0]?.type === 'diff', 'the edit is asked about with its diff');
  check(writes.length === 1 && writes[0].path === greet, 'the edit is written through fs/write_text_file');
  check(writes[0].content.includes("'Hello, '") && writes[0].content.includes('# unsaved note'),
    `the edit applies to the buffer's text: ${writes[0]?.content}`);
  check(!fs.readFileSync(greet, 'utf8').includes('Hello'), 'the agent left the disk to the editor');

  // A prompt cancelled while its command runs.
  const started = new Promise((resolve) => {
    onUpdate = (u) => {
      if (u.sessionUpdate === 'tool_call' && u.kind === 'execute' && u.rawInput.command.startsWith('sleep')) resolve();
    };
  });
  const second = ctx.request(acp.methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [{ type: 'text', text: 'Wait a while.' }],
  });
  await started;
  await new Promise((resolve) => setTimeout(resolve, 300));
  await ctx.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId });
  const cancelled = await second;
  transcript.push({ prompt: cancelled });
  check(cancelled.stopReason === 'cancelled', `the second turn is cancelled, not ${cancelled.stopReason}`);
});

for (const entry of transcript) {
  process.stdout.write(JSON.stringify(entry) + '\n');
}
agentProcess.stdin.end();
agentProcess.kill();
process.exit(0);
