// The chat view's page: renders what the extension posts and reports clicks.
// Assistant text is markdown rendered by markdown-it with raw HTML escaped
// (so nothing the model writes runs or styles the page) and code blocks
// highlighted by highlight.js, each with Copy and Insert; each tool call is a
// card with its status and collapsible output; a sub-agent's cards sit in a
// nested block under its Agent call. Attachments show as chips.
(function () {
  const vscode = acquireVsCodeApi();
  const log = document.getElementById('log');
  const prompt = document.getElementById('prompt');
  const send = document.getElementById('send');
  const stop = document.getElementById('stop');
  const mode = document.getElementById('mode');
  const gauge = document.getElementById('gauge');
  const usage = document.getElementById('usage');
  const chips = document.getElementById('chips');
  const active = document.getElementById('active');

  // Per agent path ("" for the main agent): the element new content goes in,
  // the text block being streamed, and the cards by tool call id.
  let agents = new Map();

  function escape(text) {
    return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  }

  // html: false escapes any HTML the model writes; markdown-it's link check
  // refuses javascript:, vbscript:, file: and data: links.
  const md = window.markdownit({ html: false, linkify: true, breaks: true });
  md.renderer.rules.fence = (tokens, index) => {
    const token = tokens[index];
    const language = token.info.trim().split(/\s+/)[0];
    let body;
    try {
      body = language && window.hljs.getLanguage(language)
        ? window.hljs.highlight(token.content, { language, ignoreIllegals: true }).value
        : window.hljs.highlightAuto(token.content).value;
    } catch (error) {
      body = escape(token.content);
    }
    return '<div class="code"><div class="actions"><button class="small" data-act="copy">Copy</button>' +
      '<button class="small" data-act="insert">Insert</button></div><pre><code class="hljs">' + body + '</code></pre></div>';
  };

  function markdown(text) {
    return md.render(text);
  }

  // Copy and Insert take the block's text as shown.
  log.addEventListener('click', (event) => {
    const button = event.target.closest('.code .actions button');
    if (!button) return;
    const code = button.closest('.code').querySelector('code').textContent;
    vscode.postMessage({ type: button.dataset.act, text: code });
  });

  let tokensIn = 0;
  let tokensOut = 0;
  let cost = null;
  function showUsage() {
    const k = (n) => (n >= 1000 ? (n / 1000).toFixed(1) + 'k' : String(n));
    usage.textContent = tokensIn || tokensOut
      ? k(tokensIn) + ' in · ' + k(tokensOut) + ' out' + (cost !== null ? ' · $' + cost.toFixed(4) : '')
      : '';
  }

  function showChips(labels) {
    chips.innerHTML = '';
    labels.forEach((label, index) => {
      const chip = document.createElement('span');
      chip.className = 'chip';
      chip.textContent = label;
      const remove = document.createElement('button');
      remove.className = 'remove';
      remove.title = 'Remove';
      remove.textContent = '×';
      remove.addEventListener('click', () => vscode.postMessage({ type: 'removeChip', index }));
      chip.appendChild(remove);
      chips.appendChild(chip);
    });
  }

  function agent(path) {
    const key = path.join('/');
    let state = agents.get(key);
    if (!state) {
      state = { container: log, text: null, raw: '', cards: new Map() };
      agents.set(key, state);
    }
    return state;
  }

  function add(container, className, html) {
    const element = document.createElement('div');
    element.className = className;
    element.innerHTML = html;
    container.appendChild(element);
    log.scrollTop = log.scrollHeight;
    return element;
  }

  function brief(input) {
    if (!input || typeof input !== 'object') return '';
    for (const key of ['file_path', 'path', 'pattern', 'command', 'code', 'description', 'prompt']) {
      if (typeof input[key] === 'string') return input[key].split('\n')[0];
    }
    return '';
  }

  const handlers = {
    text(event, state) {
      if (!state.text) {
        state.text = add(state.container, 'assistant', '');
        state.raw = '';
      }
      state.raw += event.text;
      state.text.innerHTML = markdown(state.raw);
      log.scrollTop = log.scrollHeight;
    },
    tool_call(event, state) {
      state.text = null;
      const card = add(
        state.container,
        'card running',
        '<div class="title"><span class="status">⋯</span> <b>' + escape(event.name) + '</b> ' +
          escape(brief(event.input)) + '</div><details><summary>output</summary><pre class="output"></pre></details>' +
          '<div class="nested"></div>',
      );
      card.dataset.tool = event.name;
      state.cards.set(event.toolCallId, card);
    },
    tool_result(event, state) {
      const card = state.cards.get(event.toolCallId);
      if (!card) return;
      card.classList.remove('running');
      card.classList.add(event.isError ? 'error' : 'ok');
      card.querySelector('.status').textContent = event.isError ? '✗' : '✓';
      const summary = document.createElement('div');
      summary.className = 'summary';
      summary.textContent = event.summary;
      card.insertBefore(summary, card.querySelector('details'));
      card.querySelector('.output').textContent = event.output;
    },
    subagent_started(event, state, path) {
      const card = state.cards.get(event.agentId);
      const child = agent(path.concat([event.agentId]));
      child.container = card ? card.querySelector('.nested') : add(state.container, 'nested', '');
      add(child.container, 'subagent', '↳ sub-agent: ' + escape(event.description));
    },
    subagent_finished(event, state, path) {
      const child = agent(path.concat([event.agentId]));
      add(child.container, 'subagent', '↳ ' + escape(event.stopReason));
    },
    edit_proposed(event, state) {
      add(state.container, 'notice', '✎ ' + escape(event.path) + ': review the change in the preview');
    },
    edit_rejected(event, state) {
      add(state.container, 'notice error', '✗ ' + escape(event.path) + ': ' + escape(event.reason));
    },
    usage(event, state, path) {
      tokensIn += event.usage.promptTokens || 0;
      tokensOut += event.usage.completionTokens || 0;
      if (typeof event.usage.costUsd === 'number') cost = (cost || 0) + event.usage.costUsd;
      showUsage();
    },
    context_usage(event) {
      gauge.value = event.contextWindow ? event.usedTokens / event.contextWindow : 0;
      gauge.title = 'Context: ' + event.usedTokens + ' of ' + event.contextWindow + ' tokens';
    },
    compaction(event, state) {
      add(state.container, 'notice', 'context compacted: ' + event.tokensBefore + ' → ' + event.tokensAfter + ' tokens');
    },
    hook(event, state) {
      if (event.outcome === 'ok') return;
      const error = event.outcome === 'blocked' ? '' : ' error';
      add(state.container, 'notice' + error, '⚑ ' + escape(event.event) + ' hook ' + escape(event.outcome) + ': ' + escape(event.message));
    },
    files_attached(event, state) {
      add(state.container, 'notice', '+ ' + escape(event.paths.join(', ')));
    },
    loop_detected(event, state) {
      add(state.container, 'notice', '⟳ ' + escape(event.description));
    },
    retry(event, state) {
      add(state.container, 'notice', '↻ retry ' + event.attempt + ': ' + escape(event.error));
    },
    error(event, state) {
      add(state.container, 'notice error', escape(event.message));
    },
    turn_finished(event, state, path) {
      if (path.length > 0) return;
      if (!state.raw && event.text) {
        handlers.text({ text: event.text }, state);
      }
      state.text = null;
      state.raw = '';
      add(log, 'finished', '— ' + escape(event.stopReason));
    },
    turn_started(event, state, path) {
      if (path.length === 0) state.raw = '';
    },
  };

  function approval(id, params) {
    const who = params.agentPath.length ? ' [' + params.agentPath.join('/') + ']' : '';
    const box = add(
      log,
      'approval',
      '<div>Allow <b>' + escape(params.toolCall.name) + '</b>(' + escape(brief(params.toolCall.input)) + ')' + escape(who) +
        '? <span class="reason">' + escape(params.reason) + '</span></div>' +
        '<button data-decision="allow">Allow</button> <button data-decision="deny">Deny</button> ' +
        '<button data-decision="allowAlways">Always allow</button>',
    );
    for (const button of box.querySelectorAll('button')) {
      button.addEventListener('click', () => {
        vscode.postMessage({ type: 'approve', id, decision: button.dataset.decision });
        box.classList.add('answered');
        box.querySelectorAll('button').forEach((b) => (b.disabled = true));
        box.appendChild(document.createTextNode(' → ' + button.textContent));
      });
    }
  }

  window.addEventListener('message', (message) => {
    const data = message.data;
    switch (data.type) {
      case 'event': {
        const params = data.params;
        const handler = handlers[params.event.kind];
        if (handler) handler(params.event, agent(params.agentPath), params.agentPath);
        break;
      }
      case 'user': {
        agent([]).text = null;
        const shown = (data.chips || []).map((c) => '<span class="chip">' + escape(c) + '</span>').join('');
        add(log, 'user', (shown ? '<div>' + shown + '</div>' : '') + escape(data.text));
        break;
      }
      case 'chips':
        showChips(data.chips);
        break;
      case 'active':
        active.hidden = !data.label;
        active.textContent = '+ ' + (data.label || '');
        break;
      case 'mention': {
        const at = prompt.selectionStart;
        prompt.value = prompt.value.slice(0, at) + data.text + prompt.value.slice(at);
        prompt.focus();
        prompt.selectionStart = prompt.selectionEnd = at + data.text.length;
        break;
      }
      case 'approval':
        approval(data.id, data.params);
        break;
      case 'busy':
        stop.disabled = !data.busy;
        break;
      case 'mode':
        mode.value = data.mode;
        break;
      case 'notice':
        add(log, 'notice error', escape(data.text));
        break;
      case 'reset':
        log.innerHTML = '';
        agents = new Map();
        gauge.value = 0;
        tokensIn = tokensOut = 0;
        cost = null;
        showUsage();
        break;
      case 'replay':
        for (const m of data.messages) {
          for (const block of m.blocks) {
            if (block.type === 'text') add(log, m.role === 'user' ? 'user' : 'assistant', markdown(block.text));
            if (block.type === 'tool_use') add(log, 'card ok', '<b>' + escape(block.name) + '</b> ' + escape(brief(block.input)));
          }
        }
        break;
    }
  });

  function submit() {
    const text = prompt.value.trim();
    if (!text) return;
    prompt.value = '';
    vscode.postMessage({ type: 'send', text });
  }
  send.addEventListener('click', submit);
  prompt.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey) {
      event.preventDefault();
      submit();
    }
  });
  // "@" at the start of a word picks a file and mentions it: the server
  // attaches the files a prompt names.
  prompt.addEventListener('input', (event) => {
    const at = prompt.selectionStart;
    if (event.data === '@' && (at === 1 || /\s/.test(prompt.value[at - 2]))) {
      prompt.value = prompt.value.slice(0, at - 1) + prompt.value.slice(at);
      prompt.selectionStart = prompt.selectionEnd = at - 1;
      vscode.postMessage({ type: 'pickFile', mention: true });
    }
  });
  document.getElementById('addFile').addEventListener('click', () => vscode.postMessage({ type: 'pickFile', mention: false }));
  document.getElementById('addProblems').addEventListener('click', () => vscode.postMessage({ type: 'addProblems' }));
  active.addEventListener('click', () => vscode.postMessage({ type: 'addActive' }));
  stop.addEventListener('click', () => vscode.postMessage({ type: 'stop' }));
  mode.addEventListener('change', () => vscode.postMessage({ type: 'mode', mode: mode.value }));
  document.getElementById('sessions').addEventListener('click', () => vscode.postMessage({ type: 'sessions' }));
  document.getElementById('new').addEventListener('click', () => vscode.postMessage({ type: 'newChat' }));
  vscode.postMessage({ type: 'ready' });
})();
