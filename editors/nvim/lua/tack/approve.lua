-- The server's questions to the user: approvals (`tack/approveTool`, may a
-- tool call run?) through vim.ui.select, and the model's own questions
-- (`tack/askUser`) through vim.ui.select when it offers choices, else
-- vim.ui.input. Each runs in the handler's coroutine, which waits for the
-- answer.

local M = {}

local choices = {
  { label = 'Allow', decision = 'allow' },
  { label = 'Deny', decision = 'deny' },
  { label = 'Always allow (this conversation)', decision = 'allowAlways' },
}

local function describe(params)
  local call = params.toolCall or {}
  local what = require('tack.chat').brief(call.input)
  if what == '' then
    what = vim.json.encode(call.input or vim.empty_dict())
  end
  local who = (#(params.agentPath or {}) > 0) and (' [' .. table.concat(params.agentPath, '/') .. ']') or ''
  return string.format('tack%s: %s(%s)? %s', who, call.name or '?', what, params.reason or '')
end

--- Runs `prompt_user(done)` and waits in the handler's coroutine until it
--- calls `done(value)`; returns the value.
local function wait_for(prompt_user)
  local co = coroutine.running()
  local answered, value = false, nil
  prompt_user(function(result)
    answered, value = true, result
    if co and coroutine.status(co) == 'suspended' then
      coroutine.resume(co)
    end
  end)
  if not answered and co then
    coroutine.yield()
  end
  return value
end

function M.ask(params)
  require('tack.chat').note('? ' .. describe(params))
  local decision = wait_for(function(done)
    vim.ui.select(choices, {
      prompt = describe(params),
      format_item = function(item)
        return item.label
      end,
    }, function(choice)
      done(choice and choice.decision or 'deny')
    end)
  end)
  return { decision = decision }
end

--- `tack/askUser`: the answer, or vim.NIL when the user dismissed it.
function M.ask_user(params)
  local who = (#(params.agentPath or {}) > 0) and (' [' .. table.concat(params.agentPath, '/') .. ']') or ''
  local prompt = 'tack' .. who .. ': ' .. params.question
  require('tack.chat').note('? ' .. params.question)
  local answer = wait_for(function(done)
    if params.choices and #params.choices > 0 then
      vim.ui.select(params.choices, { prompt = prompt }, done)
    else
      vim.ui.input({ prompt = prompt .. ' ' }, done)
    end
  end)
  if answer == nil or answer == '' then
    return { answer = vim.NIL }
  end
  require('tack.chat').note('  ⎿ ' .. answer)
  return { answer = answer }
end

return M
