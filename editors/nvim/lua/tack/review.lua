-- Review of proposed edits (`workspace/applyEdit`). The server sends one
-- annotated edit per hunk; this shows them as a diff and lets the user take
-- or leave each one, applies only what was taken, and answers the server,
-- which then reads the buffers to tell the model which hunks landed.
--
-- Keys in the review buffer: `a` take the hunk under the cursor, `r` leave
-- it, `A` take all, `R` leave all, `<CR>` apply what was taken, `q` reject
-- everything, `d` the native diff view of the hunk's file. Hunks not taken
-- are left out.
--
-- The diff view (`:TackReview diff`, or `review = 'diff'` in setup) puts
-- the buffer beside what it would become, with `:diffthis`; `a`/`r` there
-- take or leave the hunk under the cursor, `]c`/`[c` move between hunks,
-- `q` goes back to the list and `<CR>` applies.

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

--- The buffer's lines with the hunks of `bufnr` not left out applied, and
--- for each hunk the lines it covers there: { item, first, last } (1-based;
--- last < first for a deletion). A hunk left out covers the lines it would
--- replace, so it can be taken back from there.
local function proposed(review, bufnr)
  local source = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local hunks = {}
  for _, item in ipairs(review.items) do
    if item.kind == 'hunk' and item.bufnr == bufnr then
      table.insert(hunks, item)
    end
  end
  table.sort(hunks, function(a, b)
    return a.edit.range.start.line < b.edit.range.start.line
  end)
  local lines, spans, next_line = {}, {}, 0
  for _, item in ipairs(hunks) do
    local range = item.edit.range
    for index = next_line + 1, range.start.line do
      table.insert(lines, source[index])
    end
    local first = #lines + 1
    local replaced = old_lines(bufnr, range)
    if item.choice == 'leave' then
      vim.list_extend(lines, replaced)
    else
      local added = vim.split(item.edit.newText or '', '\n', { plain = true })
      if added[#added] == '' then
        table.remove(added)
      end
      vim.list_extend(lines, added)
    end
    table.insert(spans, { item = item, first = first, last = #lines })
    next_line = range.start.line + #replaced
  end
  for index = next_line + 1, #source do
    table.insert(lines, source[index])
  end
  return lines, spans
end

local function render(review)
  local lines = {
    'tack proposes: ' .. (review.label or 'changes'),
    'a take · r leave · A take all · R leave all · d diff view · <CR> apply · q reject all',
    '',
  }
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

local function close_diff(review)
  local view = review.diff
  if not view then
    return
  end
  review.diff = nil
  for _, win in ipairs({ view.source_win, view.proposed_win }) do
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_call(win, function()
        vim.cmd('diffoff')
      end)
    end
  end
  if vim.api.nvim_tabpage_is_valid(view.tab) and #vim.api.nvim_list_tabpages() > 1 then
    vim.cmd.tabclose(vim.api.nvim_tabpage_get_number(view.tab))
  end
  if vim.api.nvim_buf_is_valid(view.proposed) then
    vim.api.nvim_buf_delete(view.proposed, { force = true })
  end
  if vim.api.nvim_win_is_valid(review.win) then
    vim.api.nvim_set_current_win(review.win)
  end
end

local function refresh_diff(review)
  local view = review.diff
  local lines, spans = proposed(review, view.bufnr)
  view.spans = spans
  vim.bo[view.proposed].modifiable = true
  vim.api.nvim_buf_set_lines(view.proposed, 0, -1, false, lines)
  vim.bo[view.proposed].modifiable = false
  vim.cmd('diffupdate')
end

--- The hunk shown at line `line` of the proposed buffer: the one covering it,
--- else the nearest (a deletion covers no line).
local function hunk_at(view, line)
  local best, distance = nil, math.huge
  for _, span in ipairs(view.spans) do
    if line >= span.first and line <= math.max(span.first, span.last) then
      return span.item
    end
    local away = math.min(math.abs(line - span.first), math.abs(line - span.last))
    if away < distance then
      best, distance = span.item, away
    end
  end
  return best
end

--- Opens the native diff view of one file of the review in a new tab: the
--- buffer (left) against what it becomes with the hunks not left out (right).
local function open_diff(review, bufnr, actions)
  close_diff(review)
  local source_name = vim.api.nvim_buf_get_name(bufnr)
  vim.cmd('tab split')
  local tab = vim.api.nvim_get_current_tabpage()
  local source_win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(source_win, bufnr)
  vim.cmd('diffthis')
  local proposed_buf = vim.api.nvim_create_buf(false, true)
  vim.bo[proposed_buf].bufhidden = 'wipe'
  vim.bo[proposed_buf].filetype = vim.bo[bufnr].filetype
  pcall(vim.api.nvim_buf_set_name, proposed_buf, 'tack://proposed/' .. vim.fn.fnamemodify(source_name, ':.'))
  vim.cmd('rightbelow vsplit')
  local proposed_win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(proposed_win, proposed_buf)
  review.diff = { tab = tab, bufnr = bufnr, proposed = proposed_buf, source_win = source_win, proposed_win = proposed_win }
  refresh_diff(review)
  vim.cmd('diffthis')
  local map = function(lhs, fn)
    vim.keymap.set('n', lhs, fn, { buffer = proposed_buf, nowait = true })
  end
  local function choose(choice)
    local view = review.diff
    local line = vim.api.nvim_win_get_cursor(view.proposed_win)[1]
    local item = hunk_at(view, line)
    if not item then
      return
    end
    item.choice = choice
    actions.render()
    refresh_diff(review)
  end
  map('a', function()
    choose('take')
  end)
  map('r', function()
    choose('leave')
  end)
  map('q', function()
    close_diff(review)
  end)
  map('<CR>', function()
    -- Apply what the right side shows: this file's undecided hunks too.
    for _, span in ipairs(review.diff.spans) do
      span.item.choice = span.item.choice or 'take'
    end
    close_diff(review)
    actions.finish()
  end)
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = proposed_buf,
    once = true,
    callback = function()
      if review.diff and review.diff.proposed == proposed_buf then
        review.diff = nil
      end
    end,
  })
  vim.api.nvim_exec_autocmds('User', { pattern = 'TackReviewDiff', data = { file = source_name } })
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
    close_diff(review)
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
  review.open_diff = function()
    local line = vim.api.nvim_win_get_cursor(review.win)[1]
    local item = review.items[review.line_to_item[line] or 0]
    if not (item and item.kind == 'hunk') then
      for _, candidate in ipairs(review.items) do
        if candidate.kind == 'hunk' then
          item = candidate
          break
        end
      end
    end
    if not item then
      vim.notify('tack: this change has no file contents to diff', vim.log.levels.INFO)
      return
    end
    open_diff(review, item.bufnr, {
      render = function()
        render(review)
      end,
      finish = function()
        finish(false)
      end,
    })
  end
  map('d', review.open_diff)
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
  if require('tack').config.review == 'diff' then
    review.open_diff()
  end
  vim.api.nvim_exec_autocmds('User', { pattern = 'TackReview', data = { items = #review.items } })
  if not review.done and co then
    coroutine.yield()
  end
  M.current = nil
  return apply(review)
end

--- `:TackReview [diff]`: back to the open review, or its diff view.
function M.command(how)
  local review = M.current
  if not review then
    vim.notify('tack: no change is waiting for review', vim.log.levels.INFO)
    return
  end
  if how == 'diff' then
    if vim.api.nvim_win_is_valid(review.win) then
      vim.api.nvim_set_current_win(review.win)
    end
    review.open_diff()
  elseif vim.api.nvim_win_is_valid(review.win) then
    close_diff(review)
  end
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
