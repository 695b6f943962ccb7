-- tack for Neovim: starts `tack lsp` for the workspace, attaches the
-- workspace's buffers (so the agent sees unsaved text), and wires the chat,
-- approvals and the review of proposed edits. The server does the work.

local M = {}

M.config = {
  cmd = { 'tack', 'lsp' },
  init_options = {},
}

local state = {
  client_id = nil,
  root = nil,
  -- The conversation the chat buffer shows.
  conversation = nil,
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
  M.with_conversation(function(conversation)
    chat.user(prompt)
    M.request('tack/turn', { conversationId = conversation, prompt = prompt })
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
