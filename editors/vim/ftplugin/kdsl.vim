" kdsl: comments, and `:make` runs `kdslc check` on the current file.
if exists('b:did_ftplugin')
  finish
endif
let b:did_ftplugin = 1

setlocal commentstring=//\ %s
setlocal comments=s1:/*,mb:*,ex:*/,://
setlocal formatoptions-=t formatoptions+=croql
setlocal suffixesadd=.kdsl
compiler kdslc

let b:undo_ftplugin = 'setlocal commentstring< comments< formatoptions< suffixesadd< makeprg< errorformat<'
