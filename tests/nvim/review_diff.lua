-- The review's native diff view: with `review = 'diff'` a two-hunk edit
-- opens beside the buffer under :diffthis; the second hunk is left out from
-- the diff view (the proposed side drops it at once), `<CR>` there applies
-- the first, and the model is told which hunk landed.
-- Exits 0 when every check holds, 1 (with the reason on stderr) otherwise.

local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/helpers.lua')
local root, check = H.root, H.check

local function line_holding(bufnr, text)
  for index, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    if line == text then
      return index
    end
  end
end

local function run()
  local tack = H.start({ review = 'diff' })
  vim.cmd.edit('greet.py')
  local source = vim.api.nvim_get_current_buf()

  local viewed = false
  vim.api.nvim_create_autocmd('User', {
    pattern = 'TackReviewDiff',
    once = true,
    callback = function()
      vim.schedule(function()
        local review = require('tack.review').current
        local view = review.diff
        check(view ~= nil, 'no diff view')
        check(vim.api.nvim_get_current_tabpage() == view.tab, 'the diff view is not in its own tab')
        check(vim.wo[view.source_win].diff and vim.wo[view.proposed_win].diff, 'the windows are not in diff mode')
        check(vim.api.nvim_win_get_buf(view.source_win) == source, 'the left side is not the buffer')
        local proposed = view.proposed
        local shown = H.text(proposed)
        check(shown:find('def greet(name: str) -> str:', 1, true) ~= nil, 'hunk 1 is not proposed:\n' .. shown)
        check(shown:find('print(greet("world"))', 1, true) ~= nil, 'hunk 2 is not proposed:\n' .. shown)
        H.capture('review-diff.txt', proposed)

        -- Leave hunk 2 from the diff view: the proposed side drops it.
        vim.api.nvim_set_current_win(view.proposed_win)
        vim.api.nvim_win_set_cursor(view.proposed_win, { line_holding(proposed, 'print(greet("world"))'), 0 })
        vim.cmd('normal r')
        shown = H.text(proposed)
        check(shown:find("print(greet('world'))", 1, true) ~= nil, 'hunk 2 was not dropped:\n' .. shown)
        check(shown:find('def greet(name: str) -> str:', 1, true) ~= nil, 'hunk 1 went too:\n' .. shown)
        local list = H.text(review.bufnr)
        check(list:find('[-] 2. greet.py', 1, true) ~= nil, 'the list does not show hunk 2 left:\n' .. list)
        viewed = true
        vim.cmd('execute "normal \\<CR>"')
      end)
    end,
  })

  vim.cmd('TackChat fix greet.py')
  local chat = require('tack.chat')
  local finished = vim.wait(30000, function()
    for _, params in ipairs(chat.state.events) do
      if params.event.kind == 'turn_finished' and #params.agentPath == 0 then
        return true
      end
    end
    return false
  end, 20)
  check(finished, 'the turn did not finish; events: ' .. vim.inspect(chat.state.events))
  check(viewed, 'the diff view never opened')
  check(#vim.api.nvim_list_tabpages() == 1, 'the diff tab is still open')

  local lines = vim.api.nvim_buf_get_lines(source, 0, -1, false)
  check(lines[1] == 'def greet(name: str) -> str:', 'hunk 1 not applied: ' .. vim.inspect(lines))
  check(lines[7] == "print(greet('world'))", 'hunk 2 was applied: ' .. vim.inspect(lines))
  local told
  for _, params in ipairs(chat.state.events) do
    if params.event.kind == 'tool_result' and params.event.name == 'MultiEdit' then
      told = params.event.output
    end
  end
  check(told and told:find('hunks 1 of 2 landed', 1, true), 'the model was told: ' .. tostring(told))
  check(tack.client() ~= nil, 'the server stopped')
end

H.run(run)
