-- Drives the Neovim plugin in headless Neovim against the real `tack lsp`
-- with the scripted model: a chat turn streams into the chat buffer, a Bash
-- call is approved through vim.ui.select, the model's questions (AskUser)
-- are answered through vim.ui.select and vim.ui.input, and a two-hunk edit
-- is reviewed with the review keys, taking the first hunk and leaving the
-- second.
-- Exits 0 when every check holds, 1 (with the reason on stderr) otherwise.

local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/helpers.lua')
local root, check = H.root, H.check

local function run()
  -- Approvals: record the question, answer the first choice (Allow).
  local asked = {}
  vim.ui.select = function(items, opts, on_choice)
    table.insert(asked, opts.prompt)
    on_choice(items[1])
  end
  local inputs = {}
  vim.ui.input = function(opts, on_confirm)
    table.insert(inputs, opts.prompt)
    on_confirm('Ada')
  end

  local tack = H.start()
  vim.cmd.edit('greet.py')
  local source = vim.api.nvim_get_current_buf()

  -- Review: take hunk 1, leave hunk 2, apply.
  local reviewed = false
  vim.api.nvim_create_autocmd('User', {
    pattern = 'TackReview',
    once = true,
    callback = function()
      vim.schedule(function()
        local review = require('tack.review')
        local win = review.current.win
        vim.api.nvim_set_current_win(win)
        vim.api.nvim_win_set_cursor(win, { review.line_of(1), 0 })
        vim.cmd('normal a')
        vim.api.nvim_win_set_cursor(win, { review.line_of(2), 0 })
        vim.cmd('normal r')
        local shown = H.text(review.current.bufnr)
        check(shown:find('[x] 1. greet.py', 1, true) ~= nil, 'hunk 1 is not marked taken:\n' .. shown)
        check(shown:find('[-] 2. greet.py', 1, true) ~= nil, 'hunk 2 is not marked left:\n' .. shown)
        check(shown:find('+ def greet(name: str) -> str:', 1, true) ~= nil, 'the diff is not shown:\n' .. shown)
        reviewed = true
        H.capture('review.txt', review.current.bufnr)
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
  check(reviewed, 'the review window never opened')

  -- The approval was asked about Bash, then the model's two questions.
  check(#asked == 2 and asked[1]:find('Bash(echo hi)', 1, true) ~= nil, 'approval: ' .. vim.inspect(asked))
  check(asked[2] == 'tack: Which quotes?', 'question with choices: ' .. vim.inspect(asked))
  check(#inputs == 1 and inputs[1] == 'tack: Your name? ', 'free question: ' .. vim.inspect(inputs))

  -- The buffer holds hunk 1 only; the file on disk is untouched.
  local lines = vim.api.nvim_buf_get_lines(source, 0, -1, false)
  check(lines[1] == 'def greet(name: str) -> str:', 'hunk 1 not applied: ' .. vim.inspect(lines))
  check(lines[7] == "print(greet('world'))", 'hunk 2 was applied: ' .. vim.inspect(lines))
  check(vim.fn.readfile(root .. '/greet.py')[1] == 'def greet(name):', 'the disk changed')

  -- What the server told the model.
  local edit_result, bash_result
  local answers = {}
  for _, params in ipairs(chat.state.events) do
    local event = params.event
    if event.kind == 'tool_result' and event.name == 'AskUser' then
      table.insert(answers, event.output)
    elseif event.kind == 'tool_result' and event.name == 'MultiEdit' then
      edit_result = event.output
    elseif event.kind == 'tool_result' and event.name == 'Bash' then
      bash_result = event.output
    end
  end
  check(bash_result and bash_result:find('hi', 1, true), 'bash result: ' .. tostring(bash_result))
  check(
    vim.deep_equal(answers, { 'The user answered: double', 'The user answered: Ada' }),
    'answers: ' .. vim.inspect(answers)
  )
  check(
    edit_result and edit_result:find('hunks 1 of 2 landed', 1, true),
    'the model was told: ' .. tostring(edit_result)
  )

  -- The chat buffer shows the conversation.
  local shown = H.text(chat.state.bufnr)
  for _, expected in ipairs({ 'fix greet.py', '● Bash(echo hi)', '● MultiEdit(greet.py)', 'Done with one hunk.', '— end_turn' }) do
    check(shown:find(expected, 1, true) ~= nil, 'the chat lacks "' .. expected .. '":\n' .. shown)
  end
  H.capture('chat.txt', chat.state.bufnr)
end

H.run(run)
