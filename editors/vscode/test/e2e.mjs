// End-to-end test of the packaged extension (tack.vsix, installed as a user
// installs it) in real VS Code (code-server 4.100.3, the VS Code 1.100.3
// workbench and extension host) driven through Debian's Chromium by
// playwright-core, against the real `tack lsp` with the scripted model: a
// selection is attached with "Add selection to chat" and shows as a chip, a
// chat turn streams into the chat view and the server receives the
// selection, a Bash approval is clicked, a two-hunk edit goes through VS
// Code's refactor preview with one hunk taken, and the answer's markdown and
// highlighted code block render. Keeps screenshots. Run it with
// scripts/test-vscode.
//
// Environment: TACK_BIN (the tack binary), TACK_E2E_DIR (where code-server
// and playwright-core are installed), TACK_E2E_OUT (artifacts), TACK_VSIX
// (the packaged extension).

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const here = path.dirname(new URL(import.meta.url).pathname);
const e2eDir = process.env.TACK_E2E_DIR;
const tackBin = process.env.TACK_BIN;
const out = process.env.TACK_E2E_OUT ?? path.join(e2eDir, 'artifacts');
const vsix = process.env.TACK_VSIX;
if (!e2eDir || !tackBin || !vsix) {
  throw new Error('set TACK_E2E_DIR, TACK_BIN and TACK_VSIX (scripts/test-vscode does)');
}
const require = createRequire(path.join(e2eDir, 'package.json'));
const { chromium } = require('playwright-core');

fs.mkdirSync(out, { recursive: true });
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'tack-vscode-'));
const workspace = path.join(scratch, 'workspace');
const userData = path.join(scratch, 'user-data');
const extensions = path.join(scratch, 'extensions');
fs.mkdirSync(workspace);
fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
fs.mkdirSync(extensions);

// The workspace, and the model's script: Read and Bash (asks), then a two-hunk edit.
fs.writeFileSync(path.join(workspace, 'greet.py'), "def greet(name):\n    return 'Hello, ' + name\n\n\n\n\nprint(greet('world'))\n");
const call = (tool, input) => JSON.stringify({ tool, input });
fs.writeFileSync(
  path.join(scratch, 'script.json'),
  JSON.stringify([
    // Read first: an edit of a file the model has not read is refused.
    'Let me check the shell first.\n' + call('Read', { file_path: 'greet.py' }) + '\n' + call('Bash', { command: 'echo hi' }) + '\n',
    call('MultiEdit', {
      file_path: 'greet.py',
      edits: [
        { old_string: 'def greet(name):', new_string: 'def greet(name: str) -> str:' },
        { old_string: "print(greet('world'))", new_string: 'print(greet("world"))' },
      ],
    }),
    'Done: **one hunk** taken. From JavaScript it would read:\n\n```js\nconst greeting = greet("Ada");\n```\n',
  ]),
);
fs.writeFileSync(
  path.join(userData, 'User', 'settings.json'),
  JSON.stringify({
    'tack.serverPath': tackBin,
    'tack.initializationOptions': { model: { backend: 'scripted', script: path.join(scratch, 'script.json') } },
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'security.workspace.trust.enabled': false,
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'telemetry.telemetryLevel': 'off',
    'chat.disableAIFeatures': true,
  }),
);
const codeServerBin = path.join(e2eDir, 'node_modules', '.bin', 'code-server');
const env = { ...process.env, XDG_CONFIG_HOME: path.join(scratch, 'config'), XDG_DATA_HOME: path.join(scratch, 'data') };
// The packaged extension, installed the way a user installs a .vsix.
await new Promise((resolve, reject) => {
  const install = spawn(codeServerBin, ['--extensions-dir', extensions, '--user-data-dir', userData, '--install-extension', vsix], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let said = '';
  install.stdout.on('data', (d) => (said += d));
  install.stderr.on('data', (d) => (said += d));
  install.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`installing ${vsix} failed:\n${said}`))));
});

const port = await new Promise((resolve) => {
  const server = net.createServer();
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address();
    server.close(() => resolve(port));
  });
});
const codeServer = spawn(
  codeServerBin,
  [
    '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-workspace-trust', '--disable-telemetry',
    '--disable-update-check', '--user-data-dir', userData, '--extensions-dir', extensions, workspace,
  ],
  { env, stdio: ['ignore', 'pipe', 'pipe'] },
);
let serverLog = '';
codeServer.stdout.on('data', (d) => (serverLog += d));
codeServer.stderr.on('data', (d) => (serverLog += d));

let browser;
let page;
const started = Date.now();
function step(what) {
  process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(1)} s] ${what}\n`);
}

async function waitForServer() {
  for (let i = 0; i < 300; i++) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (response.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('code-server did not start:\n' + serverLog);
}

async function main() {
  await waitForServer();
  step('code-server is up');
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
  step('the workbench is up');

  // Open greet.py so that the edit goes to an open editor.
  await page.keyboard.press('Control+P');
  await page.keyboard.type('greet.py');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'greet.py' }).first().waitFor();
  await page.keyboard.press('Enter');
  await page.waitForSelector('.monaco-editor .view-lines', { timeout: 30000 });

  // The chat view, through the command VS Code makes for it.
  await runCommand('tack: Focus on Chat View');
  const chat = page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
  await chat.locator('#prompt').waitFor({ timeout: 60000 });
  step('the chat view is open');
  const shownMode = await chat.locator('#mode').inputValue();
  if (shownMode !== 'auto_read') {
    throw new Error(`the mode picker shows ${shownMode}, not the default auto_read`);
  }
  await chat.locator('#active', { hasText: 'greet.py' }).waitFor({ timeout: 30000 });

  // Select the first two lines of greet.py and attach them.
  await page.locator('.monaco-editor .view-lines').first().click();
  await page.keyboard.press('Control+Home');
  await page.keyboard.press('Shift+ArrowDown');
  await page.keyboard.press('Shift+ArrowDown');
  await runCommand('tack: Add selection to chat');
  await chat.locator('#chips .chip', { hasText: 'greet.py:1-2' }).waitFor({ timeout: 30000 });
  await page.screenshot({ path: path.join(out, 'vscode-context.png') });
  step('the selection is a chip');

  await chat.locator('#prompt').fill('fix greet.py');
  await chat.locator('#prompt').press('Enter');
  await chat.locator('.user .chip', { hasText: 'greet.py:1-2' }).waitFor({ timeout: 30000 });
  if ((await chat.locator('#chips .chip').count()) !== 0) {
    throw new Error('the chips were not cleared after sending');
  }

  // The approval, answered in the chat view.
  await chat.locator('.approval button[data-decision="allow"]').click({ timeout: 60000 });
  step('approved Bash');
  await chat.locator('.card.ok', { hasText: 'Bash' }).waitFor({ timeout: 30000 });

  // The edit: VS Code's refactor preview opens with the hunks unticked.
  const preview = page.locator('#refactorPreview');
  const rows = preview.locator('.monaco-list-row input.edit-checkbox');
  await rows.nth(2).waitFor({ timeout: 60000 });
  step(`the refactor preview is open: ${await preview.locator('.monaco-list-row').count()} rows`);
  // The annotation of each hunk names it: take hunk 1 only.
  const hunk = preview.locator('.monaco-list-row', { has: page.locator('[title^="Hunk 1 of 2"]') });
  await hunk.locator('input.edit-checkbox').check();
  await page.screenshot({ path: path.join(out, 'vscode-refactor-preview.png') });
  step('ticked hunk 1');
  await preview.locator('.monaco-button', { hasText: /^Apply$/ }).click();
  step('applied');

  // What the server told the model, shown in the MultiEdit card.
  const card = chat.locator('.card', { hasText: 'MultiEdit' });
  await card.locator('.summary').waitFor({ timeout: 30000 });
  const output = await card.locator('.output').textContent();
  if (!output.includes('hunks 1 of 2 landed')) {
    throw new Error(`the model was told: ${output}`);
  }
  await chat.locator('.finished').waitFor({ timeout: 30000 });
  const finished = await chat.locator('.finished').last().textContent();
  if (!finished.includes('end_turn')) {
    throw new Error(`the turn ended with ${finished}`);
  }
  const answer = await chat.locator('.assistant').last().innerHTML();
  if (!answer.includes('<strong>one hunk</strong>')) {
    throw new Error(`the answer is not rendered as markdown: ${answer}`);
  }
  // The code block: highlighted, with its actions.
  const block = chat.locator('.assistant .code').last();
  if ((await block.locator('.hljs-keyword').count()) === 0 || (await block.locator('button[data-act="insert"]').count()) !== 1) {
    throw new Error(`the code block is not highlighted with its actions: ${await block.innerHTML()}`);
  }
  const usage = await chat.locator('#usage').textContent();
  if (!/ in · .* out/.test(usage ?? '')) {
    throw new Error(`the conversation's tokens are not shown: ${usage}`);
  }
  // The server put the selection before the prompt: the session says so.
  const sessions = path.join(workspace, '.tack', 'sessions');
  const saved = fs.readdirSync(sessions).map((f) => fs.readFileSync(path.join(sessions, f), 'utf8')).join('\n');
  if (!saved.includes('The user attached lines 1-2 of greet.py')) {
    throw new Error(`the selection did not reach the server:\n${saved.slice(0, 2000)}`);
  }
  // The editor holds hunk 1 only.
  // The editor draws spaces as no-break spaces.
  const text = (await page.locator('.monaco-editor .view-lines').first().innerText()).replace(/\u00a0/g, ' ');
  if (!text.includes('def greet(name: str) -> str:') || !text.includes("print(greet('world'))")) {
    throw new Error(`the editor shows:\n${text}`);
  }
  await page.screenshot({ path: path.join(out, 'vscode-chat.png') });
  step(`passed; screenshot ${path.join(out, 'vscode-chat.png')}`);
}

async function runCommand(title) {
  await page.keyboard.press('F1');
  await page.locator('.quick-input-widget input').waitFor();
  await page.keyboard.type(title);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: title.split(': ')[1] }).first().waitFor();
  await page.keyboard.press('Enter');
}

let failed = false;
try {
  await main();
} catch (error) {
  failed = true;
  process.stderr.write(`FAIL: ${error.stack ?? error}\n`);
  if (page) {
    await page.screenshot({ path: path.join(out, 'failure.png') }).catch(() => {});
    fs.writeFileSync(path.join(out, 'failure.html'), await page.content().catch(() => ''));
  }
  fs.writeFileSync(path.join(out, 'code-server.log'), serverLog);
} finally {
  await browser?.close().catch(() => {});
  codeServer.kill('SIGTERM');
  fs.rmSync(scratch, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
