-- Review of proposed edits (`workspace/applyEdit`). The server sends one
-- annotated edit per hunk; this shows them as a diff and lets the user take
-- or leave each one, applies only what was taken, and answers the server,
-- which then reads the buffers to tell the model which hunks landed.
--
-- Keys in the review buffer: `a` take the hunk under the cursor, `r` leave
-- it, `A` take all, `R` leave all, `<CR>` apply what was taken, `q` reject
-- everything. Hunks not taken are left out.

local M = {}

local util = vim.lsp.util

local function fname(uri)
  return vim.uri_to_fname(uri)
end

local function relative(uri)
  local tack = require('tack')
  local path = fname(uri)
  local root = tack.state.root
  if root and path:sub(1, #root + 1) == root .. '/' then
    return path:sub(#root + 2)
  end
  return path
end

--- The lines a range covers in a buffer (whole lines, as the server sends).
local function old_lines(bufnr, range)
  local first, last = range.start.line, range['end'].line
  if range['end'].character > 0 then
    last = last + 1
  end
  return vim.api.nvim_buf_get_lines(bufnr, first, last, false)
end

local function load(uri)
  local bufnr = vim.uri_to_bufnr(uri)
  vim.fn.bufload(bufnr)
  vim.bo[bufnr].buflisted = true
  require('tack').attach(bufnr)
  return bufnr
end

--- The changes of a workspace edit as items to decide on, in order.
local function items_of(edit)
  local operations = edit.documentChanges or {}
  if edit.changes then
    for uri, edits in pairs(edit.changes) do
      table.insert(operations, { textDocument = { uri = uri, version = vim.NIL }, edits = edits })
    end
  end
  local items, creates = {}, {}
  for _, op in ipairs(operations) do
    if op.kind == 'create' then
      creates[op.uri] = op
    elseif op.kind == 'rename' then
      table.insert(items, {
        kind = 'rename',
        op = op,
        title = 'move ' .. relative(op.oldUri) .. ' to ' .. relative(op.newUri),
        lines = {},
      })
    elseif op.kind == 'delete' then
      table.insert(items, { kind = 'delete', op = op, title = 'delete ' .. relative(op.uri), lines = {} })
    else
      local uri = op.textDocument.uri
      local bufnr = load(uri)
      local new_file = creates[uri] ~= nil
      for _, text_edit in ipairs(op.edits or {}) do
        local range = text_edit.range
        local lines = {}
        for _, line in ipairs(old_lines(bufnr, range)) do
          table.insert(lines, '  - ' .. line)
        end
        local added = vim.split(text_edit.newText or '', '\n', { plain = true })
        if added[#added] == '' then
          table.remove(added)
        end
        for _, line in ipairs(added) do
          table.insert(lines, '  + ' .. line)
        end
        local where = new_file and 'new file' or string.format('line %d', range.start.line + 1)
        table.insert(items, {
          kind = 'hunk',
          uri = uri,
          bufnr = bufnr,
          version = op.textDocument.version,
          edit = { range = range, newText = text_edit.newText },
          new_file = new_file,
          title = relative(uri) .. ', ' .. where,
          lines = lines,
        })
      end
    end
  end
  return items
end

local function render(review)
  local lines = { 'tack proposes: ' .. (review.label or 'changes'), 'a take · r leave · A take all · R leave all · <CR> apply · q reject all', '' }
  review.line_to_item = {}
  local marks = { take = '[x]', leave = '[-]' }
  for index, item in ipairs(review.items) do
    table.insert(lines, string.format('%s %d. %s', marks[item.choice] or '[ ]', index, item.title))
    review.line_to_item[#lines] = index
    for _, line in ipairs(item.lines) do
      table.insert(lines, line)
      review.line_to_item[#lines] = index
    end
  end
  vim.bo[review.bufnr].modifiable = true
  vim.api.nvim_buf_set_lines(review.bufnr, 0, -1, false, lines)
  vim.bo[review.bufnr].modifiable = false
end

--- Applies the items taken; returns the answer for the server.
local function apply(review)
  local taken, by_buffer = 0, {}
  for _, item in ipairs(review.items) do
    if item.choice == 'take' then
      taken = taken + 1
      if item.kind == 'hunk' then
        local group = by_buffer[item.bufnr] or { version = item.version, edits = {} }
        table.insert(group.edits, item.edit)
        by_buffer[item.bufnr] = group
      end
    end
  end
  if taken == 0 then
    return { applied = false, failureReason = 'the user took none of the proposed changes' }
  end
  for bufnr, group in pairs(by_buffer) do
    local version = group.version
    if version ~= nil and version ~= vim.NIL and util.buf_versions[bufnr] ~= version then
      return { applied = false, failureReason = 'the document changed while the change was reviewed' }
    end
  end
  for bufnr, group in pairs(by_buffer) do
    util.apply_text_edits(group.edits, bufnr, 'utf-16')
  end
  for _, item in ipairs(review.items) do
    if item.choice == 'take' and item.kind == 'rename' then
      util.rename(fname(item.op.oldUri), fname(item.op.newUri), {})
    elseif item.choice == 'take' and item.kind == 'delete' then
      local path = fname(item.op.uri)
      local bufnr = vim.fn.bufnr(path)
      if bufnr ~= -1 then
        vim.api.nvim_buf_delete(bufnr, { force = true })
      end
      vim.fn.delete(path)
    end
  end
  return { applied = true }
end

--- Shows the edit for review and waits (in the handler's coroutine) for the
--- user's decision; returns the `ApplyWorkspaceEditResult`.
function M.review(params)
  local co = coroutine.running()
  local review = { label = params.label, items = items_of(params.edit or {}), done = false }
  if #review.items == 0 then
    return { applied = true }
  end
  review.bufnr = vim.api.nvim_create_buf(false, true)
  vim.bo[review.bufnr].filetype = 'diff'
  vim.bo[review.bufnr].bufhidden = 'wipe'
  local previous = vim.api.nvim_get_current_win()
  vim.cmd('botright split')
  review.win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(review.win, review.bufnr)
  render(review)

  local function choose(choice, all)
    if all then
      for _, item in ipairs(review.items) do
        item.choice = choice
      end
    else
      local line = vim.api.nvim_win_get_cursor(review.win)[1]
      local index = review.line_to_item[line]
      if index then
        review.items[index].choice = choice
      end
    end
    render(review)
  end
  local function finish(reject_all)
    if review.done then
      return
    end
    if reject_all then
      choose('leave', true)
    end
    review.done = true
    if vim.api.nvim_win_is_valid(review.win) then
      vim.api.nvim_win_close(review.win, true)
    end
    if vim.api.nvim_win_is_valid(previous) then
      vim.api.nvim_set_current_win(previous)
    end
    if co and coroutine.status(co) == 'suspended' then
      coroutine.resume(co)
    end
  end
  local map = function(lhs, fn)
    vim.keymap.set('n', lhs, fn, { buffer = review.bufnr, nowait = true })
  end
  map('a', function()
    choose('take')
  end)
  map('r', function()
    choose('leave')
  end)
  map('A', function()
    choose('take', true)
  end)
  map('R', function()
    choose('leave', true)
  end)
  map('<CR>', function()
    finish(false)
  end)
  map('q', function()
    finish(true)
  end)
  -- Closing the window any other way counts as rejecting the change.
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = review.bufnr,
    once = true,
    callback = function()
      vim.schedule(function()
        finish(true)
      end)
    end,
  })
  M.current = review
  vim.api.nvim_exec_autocmds('User', { pattern = 'TackReview', data = { items = #review.items } })
  if not review.done and co then
    coroutine.yield()
  end
  M.current = nil
  return apply(review)
end

--- The line of the review buffer where item `index` starts.
function M.line_of(index)
  local review = M.current
  if not review then
    return nil
  end
  for line = 1, vim.api.nvim_buf_line_count(review.bufnr) do
    if review.line_to_item[line] == index then
      return line
    end
  end
end

return M
