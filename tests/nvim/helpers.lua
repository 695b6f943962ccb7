-- What the Neovim scenarios share: the environment tests/nvim.rs sets up,
-- failing with a reason, starting the plugin against the real server, and
-- text captures kept as artifacts. Loaded with dofile().

local H = {}

H.root = assert(os.getenv('TACK_TEST_WORKSPACE'))
local tack_bin = assert(os.getenv('TACK_BIN'))
vim.opt.runtimepath:prepend(assert(os.getenv('TACK_NVIM_PLUGIN')))
vim.cmd('runtime plugin/tack.lua')

--- Ends Neovim with status 1, the reason on stderr.
function H.fail(message)
  io.stderr:write('FAIL: ' .. message .. '\n')
  io.stderr:flush()
  vim.cmd('cquit 1')
end

function H.check(condition, message)
  if not condition then
    H.fail(message)
  end
end

--- Sets the plugin up with the scripted model of the workspace (and the
--- setup options in `extra`) and waits until the server is initialized.
function H.start(extra)
  vim.cmd.cd(H.root)
  local tack = require('tack')
  tack.setup(vim.tbl_extend('force', {
    cmd = { tack_bin, 'lsp' },
    init_options = { model = { backend = 'scripted', script = H.root .. '/script.json' } },
  }, extra or {}))
  H.check(vim.wait(10000, function()
    local client = tack.client()
    return client ~= nil and client.initialized
  end), 'the server did not initialize')
  return tack
end

--- A buffer's text as one string.
function H.text(bufnr)
  return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n')
end

--- Keeps a buffer's text as a test artifact, when the runner asks for them
--- (in a folder the runner made).
function H.capture(name, bufnr)
  local artifacts = os.getenv('TACK_NVIM_ARTIFACTS')
  if artifacts then
    vim.fn.writefile(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), artifacts .. '/' .. name)
  end
end

--- Runs a scenario; an error fails the test with its traceback.
function H.run(scenario)
  local ok, err = xpcall(scenario, debug.traceback)
  if not ok then
    H.fail(err)
  end
  vim.cmd('qall!')
end

return H
