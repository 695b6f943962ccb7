-- The plugin's other paths in headless Neovim against the real server: a
-- code action picked through vim.lsp.buf.code_action runs as a sub-agent
-- whose work shows in the chat; :TackMode switches the conversation to plan
-- mode, which the server then enforces; :TackSessions resumes the session.

local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/helpers.lua')
local root, check = H.root, H.check

local function run()
  local prompts = {}
  vim.ui.select = function(items, opts, on_choice)
    table.insert(prompts, opts.prompt)
    if opts.prompt == 'tack permission mode' then
      return on_choice('plan')
    end
    on_choice(items[1])
  end

  local tack = H.start()
  vim.cmd.edit('greet.py')
  check(vim.wait(5000, function()
    return #vim.lsp.get_clients({ bufnr = 0, name = 'tack' }) == 1
  end), 'greet.py is not attached to tack')

  local chat = require('tack.chat')
  local function turns_finished()
    local count = 0
    for _, params in ipairs(chat.state.events) do
      if params.event.kind == 'turn_finished' and #params.agentPath == 0 then
        count = count + 1
      end
    end
    return count
  end

  -- A code action, picked as a user would.
  vim.lsp.buf.code_action({
    filter = function(action)
      return action.title == 'Explain with tack'
    end,
    apply = true,
    range = { start = { 1, 0 }, ['end'] = { 2, 0 } },
  })
  check(vim.wait(20000, function()
    return turns_finished() == 1
  end, 20), 'the code action did not finish: ' .. vim.inspect(chat.state.events))
  local shown = H.text(chat.state.bufnr)
  for _, expected in ipairs({
    '## Explain with tack',
    '┌ sub-agent code_action_1: Explain with tack',
    '  ● Read(greet.py)',
    '└ sub-agent code_action_1 end_turn',
    'It greets people by name.',
  }) do
    check(shown:find(expected, 1, true) ~= nil, 'the chat lacks "' .. expected .. '":\n' .. shown)
  end

  -- Plan mode, then a write the server must refuse.
  vim.cmd('TackMode')
  vim.wait(200)
  vim.cmd('TackChat write a file')
  check(vim.wait(20000, function()
    return turns_finished() == 2
  end, 20), 'the plan-mode turn did not finish')
  local refused = false
  for _, params in ipairs(chat.state.events) do
    local event = params.event
    if event.kind == 'tool_result' and event.name == 'Write' and event.isError then
      refused = event.output:find('not available in plan mode', 1, true) ~= nil
    end
  end
  check(refused, 'Write was not refused in plan mode')
  check(vim.fn.filereadable(root .. '/new.txt') == 0, 'the file was written')

  -- Resume the session the chat has been writing.
  local before = tack.state.conversation
  vim.cmd('TackSessions')
  check(vim.wait(5000, function()
    return tack.state.conversation ~= before
  end), 'no session was resumed; asked: ' .. vim.inspect(prompts))
  shown = H.text(chat.state.bufnr)
  check(shown:find('(resumed session)', 1, true) ~= nil, 'the resumed session is not shown:\n' .. shown)
  check(shown:find('> write a file', 1, true) ~= nil, 'the resumed messages are not shown:\n' .. shown)
end

H.run(run)
