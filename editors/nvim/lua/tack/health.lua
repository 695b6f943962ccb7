-- :checkhealth tack: the binary, the model it will run, and the server.

local M = {}

local function default_model()
  local cache = vim.env.XDG_CACHE_HOME
  if not cache or cache == '' then
    cache = (vim.env.HOME or '~') .. '/.cache'
  end
  return cache .. '/tack/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf'
end

local function check_binary(program)
  vim.health.start('tack binary')
  if vim.fn.executable(program) ~= 1 then
    vim.health.error(string.format('`%s` is not an executable on PATH', program), {
      'build and install it from a tack checkout: cargo install --path .',
      'or point the plugin at it: require("tack").setup({ cmd = { "/path/to/tack", "lsp" } })',
    })
    return
  end
  local result = vim.system({ program, '--version' }, { text = true }):wait()
  if result.code == 0 then
    vim.health.ok(string.format('%s (%s)', vim.trim(result.stdout), vim.fn.exepath(program)))
  else
    vim.health.error(string.format('`%s --version` failed: %s', program, vim.trim(result.stderr or '')))
  end
end

local function check_model(model)
  vim.health.start('model')
  local backend = model.backend or 'llama'
  if backend == 'openai' then
    local url = model.baseUrl or model.base_url
    if url then
      vim.health.ok('model server (openai backend) at ' .. url)
    else
      vim.health.error('the openai backend needs init_options.model.baseUrl (e.g. http://127.0.0.1:8080/v1)')
    end
    return
  end
  if backend == 'scripted' then
    vim.health.ok('scripted model replaying ' .. tostring(model.script))
    return
  end
  local path, source = model.path, 'init_options.model.path'
  if not path and vim.env.TACK_MODEL and vim.env.TACK_MODEL ~= '' then
    path, source = vim.env.TACK_MODEL, 'TACK_MODEL'
  end
  if not path then
    path, source = default_model(), 'the default model'
  end
  if vim.fn.filereadable(path) == 1 then
    vim.health.ok(string.format('%s: %s', source, path))
  else
    vim.health.error(string.format('%s is missing: %s', source, path), {
      'fetch the default model from a tack checkout: scripts/fetch-model',
      'or name a GGUF file: init_options = { model = { path = "/path/to/model.gguf" } }',
    })
  end
  vim.health.info('a model named in ~/.config/tack/config.toml or the project\'s .tack/config.toml takes precedence')
end

local function check_server(tack)
  vim.health.start('server')
  local client = tack.client()
  if client and not client:is_stopped() then
    vim.health.ok(string.format('`tack lsp` is running for %s (client %d)', tack.state.root or '?', client.id))
  else
    vim.health.warn('`tack lsp` is not running', { 'start it with require("tack").setup()' })
  end
end

function M.check()
  local tack = require('tack')
  check_binary(tack.config.cmd[1])
  check_model((tack.config.init_options or {}).model or {})
  check_server(tack)
end

return M
