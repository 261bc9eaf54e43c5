-- kdsl for Neovim (0.7 or newer), without nvim-lspconfig: `.kdsl` files get
-- the filetype `kdsl`, and every kdsl buffer is attached to one `kdslc lsp`
-- client (diagnostics, quick fixes, hover, go-to-definition, symbols).
--
--   require('kdsl').setup()                                  -- kdslc on PATH
--   require('kdsl').setup({ cmd = { '/path/to/kdslc', 'lsp' } })
--   require('kdsl').setup({ init_options = { target = 'sm_80' } })
--
-- Put this directory (editors/vim) on 'runtimepath' so that `require` finds
-- it and Vim's ftdetect/syntax/compiler files load too, or copy this file
-- into ~/.config/nvim/lua/.
local M = {}

local client_id = nil

-- The default keys, for buffers where kdsl attaches. Pass `on_attach` to
-- setup() to use your own instead.
local function default_on_attach(_, bufnr)
  local function map(lhs, fn)
    vim.api.nvim_buf_set_keymap(bufnr, 'n', lhs, '', { noremap = true, silent = true, callback = fn })
  end
  map('gd', vim.lsp.buf.definition)
  map('K', vim.lsp.buf.hover)
  map('<leader>ca', vim.lsp.buf.code_action)
  map('<leader>o', vim.lsp.buf.document_symbol)
  map('[d', vim.diagnostic.goto_prev)
  map(']d', vim.diagnostic.goto_next)
end

-- Starts the client once and returns its id (a new one if the old stopped).
local function ensure_client(opts, root_dir)
  if client_id ~= nil then
    local c = vim.lsp.get_client_by_id(client_id)
    if c ~= nil and not c.is_stopped() then
      return client_id
    end
  end
  client_id = vim.lsp.start_client({
    name = 'kdsl',
    cmd = opts.cmd or { 'kdslc', 'lsp' },
    root_dir = root_dir,
    on_attach = opts.on_attach or default_on_attach,
    on_exit = opts.on_exit,
    capabilities = opts.capabilities,
    -- `{ target = 'sm_80' }`: check for that GPU (default sm_90).
    init_options = opts.init_options,
  })
  return client_id
end

function M.attach(bufnr, opts)
  opts = opts or M.opts or {}
  local name = vim.api.nvim_buf_get_name(bufnr)
  local root = name ~= '' and vim.fn.fnamemodify(name, ':p:h') or vim.fn.getcwd()
  local id = ensure_client(opts, root)
  if id ~= nil then
    vim.lsp.buf_attach_client(bufnr, id)
  end
  return id
end

function M.setup(opts)
  M.opts = opts or {}
  local group = vim.api.nvim_create_augroup('kdsl', { clear = true })
  vim.api.nvim_create_autocmd({ 'BufRead', 'BufNewFile' }, {
    group = group,
    pattern = '*.kdsl',
    command = 'setfiletype kdsl',
  })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = 'kdsl',
    callback = function(args)
      M.attach(args.buf, M.opts)
    end,
  })
end

return M
