" kdsl kernel sources
autocmd BufRead,BufNewFile *.kdsl setfiletype kdsl
