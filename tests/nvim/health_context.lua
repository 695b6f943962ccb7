-- :checkhealth tack reports the binary, the model and the running server;
-- :TackAdd attaches the buffer and a selection to the next prompt; :TackFix
-- sends the cursor line's diagnostics. Checked against the real `tack lsp`
-- with the scripted model: the prompt the agent starts from holds them.
-- Exits 0 when every check holds, 1 (with the reason on stderr) otherwise.

local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/helpers.lua')
local check = H.check

local function prompts()
  local found = {}
  for _, params in ipairs(require('tack.chat').state.events) do
    if params.event.kind == 'turn_started' and #params.agentPath == 0 then
      table.insert(found, params.event.prompt)
    end
  end
  return found
end

local function turns_finished()
  local count = 0
  for _, params in ipairs(require('tack.chat').state.events) do
    if params.event.kind == 'turn_finished' and #params.agentPath == 0 then
      count = count + 1
    end
  end
  return count
end

local function run()
  local tack = H.start()

  vim.cmd('checkhealth tack')
  local report = H.text(vim.api.nvim_get_current_buf())
  H.capture('checkhealth.txt', vim.api.nvim_get_current_buf())
  check(report:find('tack binary', 1, true) ~= nil, 'no binary section:\n' .. report)
  check(report:find('OK tack ', 1, true) ~= nil, 'the binary\'s version is not reported:\n' .. report)
  check(report:find('OK scripted model replaying', 1, true) ~= nil, 'the model is not reported:\n' .. report)
  check(report:find('is running for ' .. H.root, 1, true) ~= nil, 'the server is not reported running:\n' .. report)
  vim.cmd('bwipeout')

  vim.cmd.edit('greet.py')
  vim.cmd('TackAdd')
  vim.cmd('3,4TackAdd')
  check(#tack.state.attachments == 2, 'two attachments are pending')
  vim.cmd('TackChat make it friendlier')
  check(vim.wait(20000, function()
    return turns_finished() >= 1
  end), 'the first turn did not finish')
  check(#tack.state.attachments == 0, 'attachments go with one prompt only')
  local first = prompts()[1]
  check(first:find('The user attached @greet.py.', 1, true) == 1, 'the file is not attached:\n' .. first)
  check(first:find('lines 3-4 of greet.py:\n```\n\nprint(greet(\'world\'))', 1, true) ~= nil,
    'the selection is not attached:\n' .. first)
  local chat = H.text(require('tack.chat').state.bufnr)
  check(chat:find('[attached greet.py:3-4]', 1, true) ~= nil, 'the chat does not show the selection:\n' .. chat)

  local ns = vim.api.nvim_create_namespace('tack-test')
  vim.diagnostic.set(ns, 0, {
    { lnum = 1, col = 26, end_col = 29, severity = vim.diagnostic.severity.ERROR, source = 'pyright',
      message = '"nme" is not defined' },
  })
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  vim.cmd('TackFix')
  check(vim.wait(20000, function()
    return turns_finished() >= 2
  end), 'the fix turn did not finish')
  local second = prompts()[2]
  check(second:find('- line 2: error [pyright]: "nme" is not defined', 1, true) ~= nil,
    'the diagnostics are not attached:\n' .. second)
  check(second:find('Fix the problem the editor reports on line 2 of greet.py.', 1, true) ~= nil,
    'the fix prompt is not sent:\n' .. second)
end

H.run(run)
