-- Approvals (`tack/approveTool`): the server asks whether a tool call may
-- run; the user answers through vim.ui.select. Runs in the handler's
-- coroutine, which waits for the answer.

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

function M.ask(params)
  local co = coroutine.running()
  local answered, decision = false, 'deny'
  require('tack.chat').note('? ' .. describe(params))
  vim.ui.select(choices, {
    prompt = describe(params),
    format_item = function(item)
      return item.label
    end,
  }, function(choice)
    answered, decision = true, choice and choice.decision or 'deny'
    if co and coroutine.status(co) == 'suspended' then
      coroutine.resume(co)
    end
  end)
  if not answered and co then
    coroutine.yield()
  end
  return { decision = decision }
end

return M
