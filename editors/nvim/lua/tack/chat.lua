-- The chat buffer: the conversation as it streams. Text is appended as it
-- arrives; each tool call is a line, its result indented under it; a
-- sub-agent's activity is indented by its depth.

local M = {}

local chat = {
  bufnr = nil,
  -- Whether the last line holds streamed text that more text continues.
  streaming = false,
  -- Every event received, for tests and for :TackChat's own use.
  events = {},
  status = 'idle',
}
M.state = chat

local function buffer()
  if chat.bufnr and vim.api.nvim_buf_is_valid(chat.bufnr) then
    return chat.bufnr
  end
  chat.bufnr = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(chat.bufnr, 'tack://chat')
  vim.bo[chat.bufnr].filetype = 'markdown'
  -- Code blocks and headings highlighted where the markdown parser is there
  -- (Neovim ships it); plain text otherwise.
  pcall(vim.treesitter.start, chat.bufnr, 'markdown')
  vim.bo[chat.bufnr].bufhidden = 'hide'
  return chat.bufnr
end

--- Shows the chat in a split, unless a window already shows it.
function M.open()
  local bufnr = buffer()
  if vim.fn.bufwinid(bufnr) == -1 then
    vim.cmd('botright vsplit')
    vim.api.nvim_win_set_buf(0, bufnr)
    vim.wo.wrap = true
    vim.cmd('wincmd p')
  end
  return bufnr
end

local function append_lines(lines)
  local bufnr = buffer()
  local count = vim.api.nvim_buf_line_count(bufnr)
  local empty = count == 1 and vim.api.nvim_buf_get_lines(bufnr, 0, 1, false)[1] == ''
  vim.api.nvim_buf_set_lines(bufnr, empty and 0 or count, -1, false, lines)
  local win = vim.fn.bufwinid(bufnr)
  if win ~= -1 then
    vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(bufnr), 0 })
  end
end

--- A line of its own (ending any streamed text).
function M.note(line)
  chat.streaming = false
  append_lines(vim.split(line, '\n', { plain = true }))
end

function M.user(prompt)
  chat.asked = true
  M.note('')
  M.note('## You')
  M.note(prompt)
  M.note('')
  M.note('## tack')
end

local function stream(text)
  local bufnr = buffer()
  local pieces = vim.split(text, '\n', { plain = true })
  if chat.streaming then
    local last = vim.api.nvim_buf_line_count(bufnr)
    local line = vim.api.nvim_buf_get_lines(bufnr, last - 1, last, false)[1] or ''
    vim.api.nvim_buf_set_lines(bufnr, last - 1, last, false, { line .. pieces[1] })
    table.remove(pieces, 1)
    if #pieces > 0 then
      append_lines(pieces)
    end
  else
    append_lines(pieces)
  end
  chat.streaming = true
end

--- The input of a call in a few words: the argument that names what it works on.
function M.brief(input)
  if type(input) ~= 'table' then
    return ''
  end
  for _, key in ipairs({ 'file_path', 'path', 'pattern', 'command', 'code', 'prompt', 'description' }) do
    if type(input[key]) == 'string' then
      return (input[key]:gsub('\n.*', ' …'))
    end
  end
  return ''
end

local handlers = {
  turn_started = function(e, indent)
    chat.answered = false
    -- A turn the chat did not start (a code action) gets its own heading.
    if indent == '' and not chat.asked then
      M.note('')
      M.note('## ' .. e.prompt)
    end
    chat.asked = false
  end,
  text = function(e, indent)
    if indent == '' then
      chat.answered = true
      stream(e.text)
    end
  end,
  tool_call = function(e, indent)
    M.note(indent .. '● ' .. e.name .. '(' .. M.brief(e.input) .. ')')
  end,
  tool_result = function(e, indent)
    M.note(indent .. (e.isError and '  ✗ ' or '  ⎿ ') .. (e.summary or ''))
  end,
  edit_proposed = function(e, indent)
    M.note(indent .. '  ✎ ' .. e.path .. ': review the diff')
  end,
  edit_rejected = function(e, indent)
    M.note(indent .. '  ✗ ' .. e.path .. ': ' .. (e.reason or 'rejected'))
  end,
  subagent_started = function(e, indent)
    M.note(indent .. '┌ sub-agent ' .. e.agentId .. ': ' .. (e.description or ''))
  end,
  subagent_finished = function(e, indent)
    M.note(indent .. '└ sub-agent ' .. e.agentId .. ' ' .. e.stopReason)
  end,
  compaction = function(e)
    M.note(string.format('  (context compacted: %d → %d tokens)', e.tokensBefore, e.tokensAfter))
  end,
  hook = function(e, indent)
    if e.outcome ~= 'ok' then
      M.note(indent .. '⚑ ' .. e.event .. ' hook ' .. e.outcome .. ': ' .. (e.message or ''))
    end
  end,
  files_attached = function(e, indent)
    M.note(indent .. '+ ' .. table.concat(e.paths, ', '))
  end,
  loop_detected = function(e)
    M.note('  ⟳ ' .. e.description)
  end,
  retry = function(e)
    M.note(string.format('  ↻ retry %d: %s', e.attempt, e.error))
  end,
  error = function(e)
    M.note('! ' .. e.message)
  end,
  status = function(e)
    chat.status = e.status
  end,
  turn_finished = function(e, indent)
    if indent == '' then
      -- A sub-agent's answer (a code action's) arrives only here.
      if not chat.answered and e.text and e.text ~= '' then
        M.note(e.text)
      end
      M.note('— ' .. e.stopReason)
    end
  end,
}

function M.on_event(params)
  local tack = require('tack')
  if params.conversationId ~= tack.state.conversation then
    return
  end
  local event = params.event
  table.insert(chat.events, params)
  local depth = #(params.agentPath or {})
  local handler = handlers[event.kind]
  if handler then
    handler(event, string.rep('  ', depth))
  end
  vim.api.nvim_exec_autocmds('User', { pattern = 'TackEvent', data = params })
end

--- Shows a resumed session's messages.
function M.replay(messages)
  M.note('(resumed session)')
  for _, message in ipairs(messages) do
    for _, block in ipairs(message.blocks or {}) do
      if block.type == 'text' then
        M.note((message.role == 'user' and '> ' or '') .. block.text)
      elseif block.type == 'tool_use' then
        M.note('● ' .. block.name .. '(' .. M.brief(block.input) .. ')')
      end
    end
  end
end

return M
