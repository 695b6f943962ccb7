// The chat view's page: renders what the extension posts and reports clicks.
// Assistant text is shown as markdown (escaped first); each tool call is a
// card with its status and collapsible output; a sub-agent's cards sit in a
// nested block under its Agent call.
(function () {
  const vscode = acquireVsCodeApi();
  const log = document.getElementById('log');
  const prompt = document.getElementById('prompt');
  const send = document.getElementById('send');
  const stop = document.getElementById('stop');
  const mode = document.getElementById('mode');
  const gauge = document.getElementById('gauge');

  // Per agent path ("" for the main agent): the element new content goes in,
  // the text block being streamed, and the cards by tool call id.
  let agents = new Map();

  function escape(text) {
    return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  }

  function markdown(text) {
    const parts = escape(text).split(/```[^\n]*\n?/);
    return parts
      .map((part, index) => {
        if (index % 2 === 1) {
          return '<pre><code>' + part + '</code></pre>';
        }
        return part
          .replace(/`([^`]+)`/g, '<code>$1</code>')
          .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
          .replace(/^#{1,6} (.*)$/gm, '<strong>$1</strong>')
          .replace(/\n/g, '<br>');
      })
      .join('');
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
      case 'user':
        agent([]).text = null;
        add(log, 'user', escape(data.text));
        break;
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
  stop.addEventListener('click', () => vscode.postMessage({ type: 'stop' }));
  mode.addEventListener('change', () => vscode.postMessage({ type: 'mode', mode: mode.value }));
  document.getElementById('sessions').addEventListener('click', () => vscode.postMessage({ type: 'sessions' }));
  document.getElementById('new').addEventListener('click', () => vscode.postMessage({ type: 'newChat' }));
  vscode.postMessage({ type: 'ready' });
})();
