-- End-to-end test of `kdslc lsp` in Neovim's built-in LSP client (0.7+),
-- run by tests/nvim.rs as
--   nvim --headless --clean -u NONE -c "luafile tests/nvim/e2e.lua"
-- with these environment variables:
--   KDSLC         the kdslc binary
--   KDSL_FILE     a .kdsl file with an E0301 error (see tests/nvim.rs)
--   KDSL_LINE     the 1-based line of the error
--   KDSL_EDITORS  the repository's editors/vim directory (its lua/kdsl.lua
--                 is what users load, so the test goes through it)
--   KDSL_RESULT   where to write "ok" or the failure
-- Exits with status 0 on success and 1 on failure (`cquit 1`).

local result_path = os.getenv('KDSL_RESULT')
local log = {}

local function note(msg)
  table.insert(log, msg)
end

local function finish(ok, msg)
  local f = io.open(result_path, 'w')
  if f then
    f:write((ok and 'ok' or 'FAILED: ' .. tostring(msg)) .. '\n' .. table.concat(log, '\n') .. '\n')
    f:close()
  end
  if ok then
    vim.cmd('qall!')
  else
    vim.cmd('cquit 1')
  end
end

local function check(cond, msg)
  if not cond then
    error(msg, 2)
  end
end

-- Neovim 0.7 is the oldest supported; these names moved in later versions.
local function clients_of(bufnr)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = bufnr })
  end
  return vim.tbl_values(vim.lsp.buf_get_clients(bufnr))
end

-- UTF-16 code units in a UTF-8 string (what an LSP position counts).
local function utf16_len(s)
  local n = 0
  for i = 1, #s do
    local b = s:byte(i)
    if b < 0x80 or b >= 0xC0 then
      n = n + (b >= 0xF0 and 2 or 1)
    end
  end
  return n
end

local function diagnostics_with_code(bufnr, code)
  return vim.tbl_filter(function(d)
    return d.code == code
  end, vim.diagnostic.get(bufnr))
end

local function run()
  local kdslc = assert(os.getenv('KDSLC'), 'KDSLC is not set')
  local file = assert(os.getenv('KDSL_FILE'), 'KDSL_FILE is not set')
  local line = tonumber((assert(os.getenv('KDSL_LINE'), 'KDSL_LINE is not set')))
  local editors = assert(os.getenv('KDSL_EDITORS'), 'KDSL_EDITORS is not set')

  -- Wire kdsl up the way docs/editors.md tells users to.
  vim.opt.runtimepath:append(editors)
  local kdsl = dofile(editors .. '/lua/kdsl.lua')
  local exited = nil
  kdsl.setup({
    cmd = { kdslc, 'lsp' },
    on_attach = function() end,
    on_exit = function(code)
      exited = code
    end,
  })

  vim.cmd('syntax enable')
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()
  check(vim.bo[bufnr].filetype == 'kdsl', 'filetype is ' .. vim.bo[bufnr].filetype)

  -- 0. The Vim syntax file highlights the program.
  local function syntax_at(lnum, needle)
    local l = vim.api.nvim_buf_get_lines(bufnr, lnum - 1, lnum, true)[1]
    local col = assert(l:find(needle, 1, true), needle .. ' on line ' .. lnum)
    return vim.fn.synIDattr(vim.fn.synID(lnum, col, 1), 'name')
  end
  for _, want in ipairs({
    { 2, 'kernel', 'kdslKeyword' },
    { 2, 'f32', 'kdslType' },
    { 2, 'cluster(2)', 'kdslAttribute' },
    { 3, 'barrier', 'kdslStorage' },
    { 3, 'cluster(arrivals', 'kdslScope' },
    { line, '/*', 'kdslBlockComment' },
    { line, 'wait', 'kdslBarrierOp' },
    { line + 1, '1.0', 'kdslFloat' },
  }) do
    local got = syntax_at(want[1], want[2])
    check(got == want[3], string.format('`%s` on line %d highlights as %s, not %s', want[2], want[1], got, want[3]))
  end
  -- The client counts as attached once the server has initialized.
  local attached = vim.wait(20000, function()
    return #clients_of(bufnr) == 1
  end, 50)
  check(attached, 'the kdsl client did not attach within 20 s')

  -- 1. The server publishes E0301 at the line of the wait.
  local got = vim.wait(20000, function()
    return #diagnostics_with_code(bufnr, 'E0301') > 0
  end, 50)
  check(got, 'no E0301 diagnostic within 20 s; got ' .. vim.inspect(vim.diagnostic.get(bufnr)))
  local d = diagnostics_with_code(bufnr, 'E0301')[1]
  note('diagnostic: ' .. vim.inspect({ lnum = d.lnum, col = d.col, message = d.message, source = d.source }))
  check(d.lnum == line - 1, string.format('E0301 on line %d, expected %d', d.lnum + 1, line))
  check(d.severity == vim.diagnostic.severity.ERROR, 'E0301 is not an error')
  check(d.source == 'kdslc', 'source is ' .. tostring(d.source))
  check(vim.startswith(d.message, 'Can only await on CTA-local barriers'), 'message: ' .. d.message)
  -- The line has multi-byte text before the call: the client converted our
  -- UTF-16 column to the right byte column only if the server counted right.
  local text = vim.api.nvim_buf_get_lines(bufnr, line - 1, line, true)[1]
  local byte_col = text:find('ready.wait(0)', 1, true) - 1
  check(d.col == byte_col, string.format('E0301 at byte column %d, expected %d', d.col, byte_col))
  local related = d.user_data and d.user_data.lsp and d.user_data.lsp.relatedInformation or {}
  check(#related > 0, 'no related information')

  -- 2. Hover on the barrier shows its group.
  local hover = vim.lsp.buf_request_sync(bufnr, 'textDocument/hover', {
    textDocument = vim.lsp.util.make_text_document_params(bufnr),
    position = { line = line - 1, character = utf16_len(text:sub(1, byte_col + 1)) },
  }, 5000)
  local hover_text = ''
  for _, r in pairs(hover or {}) do
    if r.result and r.result.contents then
      hover_text = r.result.contents.value or ''
    end
  end
  note('hover: ' .. hover_text)
  check(hover_text:find('barrier `ready`: scope `cluster`', 1, true), 'hover: ' .. hover_text)

  -- 3. The quick fix, through the same request `vim.lsp.buf.code_action`
  -- sends, applied with the client's own workspace-edit code.
  local params = {
    textDocument = vim.lsp.util.make_text_document_params(bufnr),
    range = {
      start = { line = line - 1, character = 0 },
      ['end'] = { line = line - 1, character = #text },
    },
    -- What the client holds for the line, as LSP diagnostics.
    context = {
      diagnostics = vim.tbl_map(function(x)
        return {
          range = {
            start = { line = x.lnum, character = utf16_len(text:sub(1, x.col)) },
            ['end'] = { line = x.end_lnum, character = utf16_len(text:sub(1, x.end_col)) },
          },
          severity = x.severity,
          code = x.code,
          source = x.source,
          message = x.message,
        }
      end, vim.diagnostic.get(bufnr, { lnum = line - 1 })),
    },
  }
  local responses = vim.lsp.buf_request_sync(bufnr, 'textDocument/codeAction', params, 5000)
  check(responses, 'no answer to textDocument/codeAction')
  local fix = nil
  for _, r in pairs(responses) do
    check(not r.error, 'codeAction error: ' .. vim.inspect(r.error))
    for _, action in ipairs(r.result or {}) do
      note('code action: ' .. action.title)
      if action.kind == 'quickfix' and action.edit and vim.inspect(action.edit):find('wait_cluster', 1, true) then
        fix = action
      end
    end
  end
  check(fix, 'no quick fix that writes `wait_cluster`')
  vim.lsp.util.apply_workspace_edit(fix.edit, 'utf-16')
  local fixed = vim.api.nvim_buf_get_lines(bufnr, line - 1, line, true)[1]
  note('after the fix: ' .. fixed)
  check(fixed:find('ready.wait_cluster(0)', 1, true), 'the line is now: ' .. fixed)

  -- 4. The edit reached the server (didChange) and the error went away.
  local cleared = vim.wait(20000, function()
    return #diagnostics_with_code(bufnr, 'E0301') == 0
  end, 50)
  check(cleared, 'E0301 still reported after the fix')

  -- 5. Vim's quickfix route: `:make` with the compiler file parses
  -- `kdslc check --message-format short`.
  vim.cmd('compiler kdslc')
  vim.bo[bufnr].makeprg = vim.fn.shellescape(kdslc) .. ' check --message-format short %:S'
  vim.cmd('silent noautocmd make!')
  local qf = vim.tbl_filter(function(e)
    return e.valid == 1
  end, vim.fn.getqflist())
  note('quickfix: ' .. vim.inspect(qf))
  check(#qf >= 1, 'no quickfix entries from :make')
  check(qf[1].lnum == line and qf[1].type:upper() == 'E', 'quickfix entry: ' .. vim.inspect(qf[1]))
  check(qf[1].text:find('Can only await on CTA-local barriers', 1, true), 'quickfix text: ' .. qf[1].text)

  -- 6. The client shuts the server down cleanly.
  for _, client in ipairs(clients_of(bufnr)) do
    vim.lsp.stop_client(client.id)
  end
  vim.wait(10000, function()
    return exited ~= nil
  end, 50)
  check(exited == 0, 'server exit status ' .. tostring(exited))
end

-- Any error, including a timeout inside the LSP client, is a failure with a
-- message rather than a hung editor.
local ok, err = xpcall(run, debug.traceback)
finish(ok, err)
