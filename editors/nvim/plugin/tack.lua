-- The :Tack* commands. The server starts with require('tack').setup{}.

if vim.g.loaded_tack then
  return
end
vim.g.loaded_tack = true

local function tack()
  return require('tack')
end

vim.api.nvim_create_user_command('TackChat', function(opts)
  tack().send(opts.args)
end, { nargs = '*', desc = 'tack: send a prompt (asks for one when none is given)' })

vim.api.nvim_create_user_command('TackAdd', function(opts)
  if opts.range > 0 then
    tack().add(opts.line1, opts.line2)
  else
    tack().add()
  end
end, { range = true, desc = 'tack: attach the buffer, or the selected lines, to the next prompt' })

vim.api.nvim_create_user_command('TackFix', function()
  tack().fix()
end, { desc = "tack: fix what the diagnostics of the cursor's line report" })

vim.api.nvim_create_user_command('TackCancel', function()
  tack().cancel()
end, { desc = "tack: cancel the running turn" })

vim.api.nvim_create_user_command('TackSessions', function()
  tack().sessions()
end, { desc = "tack: pick a saved session and resume it" })

vim.api.nvim_create_user_command('TackMode', function(opts)
  tack().set_mode(opts.args)
end, {
  nargs = '?',
  complete = function()
    return tack().modes
  end,
  desc = 'tack: set the permission mode',
})

vim.api.nvim_create_user_command('TackReview', function(opts)
  require('tack.review').command(opts.args)
end, {
  nargs = '?',
  complete = function()
    return { 'diff' }
  end,
  desc = 'tack: the change waiting for review; `diff` shows it with :diffthis',
})
