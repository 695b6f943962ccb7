-- tack for Neovim: starts `tack lsp` for the workspace, attaches the
-- workspace's buffers (so the agent sees unsaved text), and wires the chat,
-- approvals and the review of proposed edits. The server does the work.

local M = {}

M.config = {
  cmd = { 'tack', 'lsp' },
  init_options = {},
  -- 'list' (the hunks as one diff) or 'diff' (the native :diffthis view too).
  review = 'list',
}

local state = {
  client_id = nil,
  root = nil,
  -- The conversation the chat buffer shows.
  conversation = nil,
  -- What :TackAdd attached, sent with the next prompt.
  attachments = {},
}

M.state = state

--- The running tack client, if any.
function M.client()
  return state.client_id and vim.lsp.get_client_by_id(state.client_id) or nil
end

local function notify(message, level)
  vim.notify('tack: ' .. message, level or vim.log.levels.INFO)
end
M.notify = notify

local function in_root(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or vim.bo[bufnr].buftype ~= '' or not state.root then
    return false
  end
  local path = vim.fs.normalize(vim.fn.fnamemodify(name, ':p'))
  return path:sub(1, #state.root + 1) == state.root .. '/'
end

--- Attaches a buffer to tack: the server then reads its text, unsaved
--- changes included, instead of the file.
function M.attach(bufnr)
  bufnr = bufnr == 0 and vim.api.nvim_get_current_buf() or bufnr
  if state.client_id and vim.api.nvim_buf_is_loaded(bufnr) and in_root(bufnr) then
    vim.lsp.buf_attach_client(bufnr, state.client_id)
  end
end

--- Sends a request and waits for the answer (in a coroutine) or calls back.
function M.request(method, params, callback)
  local client = M.client()
  if not client then
    notify('the server is not running; call require("tack").setup()', vim.log.levels.ERROR)
    return
  end
  client:request(method, params, function(err, result)
    if err then
      notify(method .. ': ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    if callback then
      callback(result)
    end
  end)
end

function M.start()
  local root = vim.fs.root(0, { '.tack', '.git' }) or vim.fn.getcwd()
  state.root = vim.fs.normalize(vim.fn.fnamemodify(root, ':p')):gsub('/$', '')
  local chat = require('tack.chat')
  local client_id = vim.lsp.start({
    name = 'tack',
    cmd = M.config.cmd,
    root_dir = state.root,
    workspace_folders = { { uri = vim.uri_from_fname(state.root), name = vim.fs.basename(state.root) } },
    init_options = M.config.init_options,
    -- The server compares the buffer with its proposal right after the
    -- review answers: changes must not wait for a debounce.
    flags = { debounce_text_changes = 0 },
    handlers = {
      ['tack/event'] = function(_, params)
        chat.on_event(params)
      end,
      ['tack/approveTool'] = function(_, params)
        return require('tack.approve').ask(params)
      end,
      ['tack/askUser'] = function(_, params)
        return require('tack.approve').ask_user(params)
      end,
      -- Neovim would apply these edits unasked: the plugin shows the diff and
      -- lets the user take each hunk or not.
      ['workspace/applyEdit'] = function(_, params)
        return require('tack.review').review(params)
      end,
    },
  }, { attach = false })
  if not client_id then
    notify('cannot start ' .. table.concat(M.config.cmd, ' '), vim.log.levels.ERROR)
    return
  end
  state.client_id = client_id
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    M.attach(bufnr)
  end
end

--- Creates the chat's conversation if there is none, then calls `next`.
function M.with_conversation(next)
  if state.conversation then
    return next(state.conversation)
  end
  M.request('tack/newConversation', vim.empty_dict(), function(result)
    state.conversation = result.conversationId
    next(state.conversation)
  end)
end

--- The workspace-relative name of an attachment, for the chat and messages.
local function label(attachment)
  local rel = vim.uri_to_fname(attachment.uri):sub(#state.root + 2)
  if attachment.diagnostics then
    return rel .. ' (' .. #attachment.diagnostics .. ' diagnostics)'
  elseif attachment.range then
    return string.format('%s:%d-%d', rel, attachment.range.start.line + 1, attachment.range['end'].line + 1)
  end
  return rel
end

--- Attaches the current buffer (or lines `first`..`last` of it) to the next
--- prompt: :TackAdd, or :'<,'>TackAdd for a selection.
function M.add(first, last)
  local bufnr = vim.api.nvim_get_current_buf()
  if not in_root(bufnr) then
    return notify('only files of the workspace can be attached', vim.log.levels.WARN)
  end
  M.attach(bufnr)
  local attachment = { uri = vim.uri_from_bufnr(bufnr) }
  if first and last then
    local last_line = vim.api.nvim_buf_get_lines(bufnr, last - 1, last, false)[1] or ''
    attachment.range = {
      start = { line = first - 1, character = 0 },
      ['end'] = { line = last - 1, character = vim.fn.strchars(last_line) },
    }
  end
  table.insert(state.attachments, attachment)
  require('tack.chat').note('[attached ' .. label(attachment) .. ']')
  notify('attached ' .. label(attachment) .. ' to the next prompt')
end

--- Diagnostics as the protocol carries them (LSP's shape).
local function lsp_diagnostics(diagnostics)
  return vim.tbl_map(function(d)
    return {
      range = {
        start = { line = d.lnum, character = d.col },
        ['end'] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col },
      },
      severity = d.severity,
      source = d.source,
      message = d.message,
    }
  end, diagnostics)
end

--- Asks tack to fix what the diagnostics of the cursor's line report: :TackFix.
function M.fix()
  local bufnr = vim.api.nvim_get_current_buf()
  local line = vim.api.nvim_win_get_cursor(0)[1]
  local diagnostics = vim.diagnostic.get(bufnr, { lnum = line - 1 })
  if #diagnostics == 0 then
    return notify('no diagnostics on line ' .. line, vim.log.levels.WARN)
  end
  if not in_root(bufnr) then
    return notify('only files of the workspace can be fixed', vim.log.levels.WARN)
  end
  M.attach(bufnr)
  local attachment = { uri = vim.uri_from_bufnr(bufnr), diagnostics = lsp_diagnostics(diagnostics) }
  table.insert(state.attachments, attachment)
  local rel = vim.uri_to_fname(attachment.uri):sub(#state.root + 2)
  M.send(string.format('Fix the problem the editor reports on line %d of %s.', line, rel))
end

function M.send(prompt)
  if not prompt or vim.trim(prompt) == '' then
    vim.ui.input({ prompt = 'tack> ' }, function(input)
      if input and vim.trim(input) ~= '' then
        M.send(input)
      end
    end)
    return
  end
  local chat = require('tack.chat')
  chat.open()
  local attachments = state.attachments
  state.attachments = {}
  M.with_conversation(function(conversation)
    chat.user(prompt)
    for _, attachment in ipairs(attachments) do
      chat.note('[attached ' .. label(attachment) .. ']')
    end
    local params = { conversationId = conversation, prompt = prompt }
    if #attachments > 0 then
      params.attachments = attachments
    end
    M.request('tack/turn', params)
  end)
end

function M.cancel()
  if state.conversation then
    M.request('tack/cancel', { conversationId = state.conversation })
  end
end

M.modes = { 'plan', 'ask', 'auto_read', 'auto_all' }

function M.set_mode(mode)
  local function apply(choice)
    if not choice then
      return
    end
    M.with_conversation(function(conversation)
      M.request('tack/setPermissionMode', { conversationId = conversation, permissionMode = choice }, function()
        notify('permission mode: ' .. choice)
      end)
    end)
  end
  if mode and mode ~= '' then
    return apply(mode)
  end
  vim.ui.select(M.modes, { prompt = 'tack permission mode' }, apply)
end

function M.sessions()
  M.request('tack/sessions', vim.empty_dict(), function(sessions)
    if #sessions == 0 then
      return notify('no sessions in this workspace yet')
    end
    vim.ui.select(sessions, {
      prompt = 'Resume a tack session',
      format_item = function(s)
        return string.format('%s  %s  (%d messages)', s.updatedAt, s.title, s.messageCount)
      end,
    }, function(choice)
      if not choice then
        return
      end
      M.request('tack/resume', { sessionId = choice.sessionId }, function(result)
        state.conversation = result.conversationId
        local chat = require('tack.chat')
        chat.open()
        chat.replay(result.messages)
      end)
    end)
  end)
end

-- Code actions come from the server; "Ask tack…" needs the user's question,
-- and every action reports into the chat's conversation.
local function code_action_command(command)
  local args = vim.deepcopy(command.arguments and command.arguments[1] or {})
  local function run()
    M.with_conversation(function(conversation)
      args.conversationId = conversation
      require('tack.chat').open()
      M.request('workspace/executeCommand', { command = command.command, arguments = { args } })
    end)
  end
  if args.action == 'ask' and not args.prompt then
    vim.ui.input({ prompt = 'Ask tack: ' }, function(input)
      if input and vim.trim(input) ~= '' then
        args.prompt = input
        run()
      end
    end)
  else
    run()
  end
end

function M.setup(opts)
  opts = opts or {}
  M.config.cmd = opts.cmd or M.config.cmd
  M.config.init_options = opts.init_options or M.config.init_options
  M.config.review = opts.review or M.config.review
  vim.lsp.commands['tack.codeAction'] = code_action_command
  local group = vim.api.nvim_create_augroup('tack', { clear = true })
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
    group = group,
    callback = function(event)
      M.attach(event.buf)
    end,
  })
  M.start()
end

return M
