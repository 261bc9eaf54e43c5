" Vim compiler file for kdslc: `:make` checks the current file and fills the
" quickfix list from `--message-format short`, whose lines are
"   path:line:col: error[E0301]: Can only await on CTA-local barriers
if exists('current_compiler')
  finish
endif
let current_compiler = 'kdslc'

if exists(':CompilerSet') != 2
  command -nargs=* CompilerSet setlocal <args>
endif

" Use `:make` for the current file, or set makeprg=make to use a Makefile
" that runs kdslc with --message-format short.
CompilerSet makeprg=kdslc\ check\ --message-format\ short\ %:S
CompilerSet errorformat=%f:%l:%c:\ %trror[%*[^]]]:\ %m,%f:%l:%c:\ %tarning[%*[^]]]:\ %m,%-G%.%#
