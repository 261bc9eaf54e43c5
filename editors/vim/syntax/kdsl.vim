" Vim syntax file for kdsl, the GPU kernel language of kdslc.
if exists('b:current_syntax')
  finish
endif

syn keyword kdslKeyword      kernel fn const let import
syn keyword kdslConditional  if else
syn keyword kdslRepeat       while for in step
syn keyword kdslStatement    break continue return
syn keyword kdslStorage      mut global shared barrier accum
syn keyword kdslOperatorWord as
syn keyword kdslBoolean      true false
syn keyword kdslType         bool i8 u8 i16 u16 i32 u32 i64 u64 f16 bf16 f32 f64 tf32 e4m3 e5m2 f16x2 bf16x2 tensor

" Built-in values, functions and barrier operations: the names of the
" table in src/check/builtins.rs (tests/it/docs/builtins.rs compares them).
syn keyword kdslBuiltinVar   thread_idx block_dim block_idx grid_dim cluster_idx cluster_dim cluster_grid_idx cluster_grid_dim
syn keyword kdslBuiltinVar   lane_id warp_id cluster_rank cluster_size
syn match   kdslBuiltinFn    "\<\%(min\|max\|abs\|sqrt\|rsqrt\|exp2\|log2\|exp\|log\|sin\|cos\|fma\|select\|f16x2\|bf16x2\)\ze\s*("
syn match   kdslBuiltinFn    "\<\%(ldmatrix_x1\|ldmatrix_x2\|ldmatrix_x4\|stmatrix_x1\|stmatrix_x2\|stmatrix_x4\)\ze\s*("
syn match   kdslBuiltinFn    "\<\%(atomic_add\|atomic_sub\|atomic_max\|atomic_min\|atomic_exch\|atomic_and\|atomic_or\|atomic_xor\|atomic_inc\|atomic_dec\|atomic_cas\)\ze\s*("
syn match   kdslBuiltinFn    "\<\%(shfl_down\|shfl_up\|shfl_xor\|shfl_idx\|ballot\|any\|all\|elect_one\|active_mask\)\ze\s*("
syn match   kdslBuiltinFn    "\<\%(redux_add\|redux_min\|redux_max\|redux_and\|redux_or\|redux_xor\)\ze\s*("
syn match   kdslBuiltinFn    "\<\%(lane_mask_eq\|lane_mask_lt\|lane_mask_le\|lane_mask_gt\|lane_mask_ge\|sync_warp\)\ze\s*("
syn match   kdslBuiltinFn    "\<\%(sync_threads\|cluster_sync\|fence\|fence_proxy_async\)\ze\s*("
syn match   kdslBuiltinFn    "\<\%(copy_async\|copy_async_store\|copy_async_commit\|copy_async_wait\|remote\)\ze\s*("
syn match   kdslBuiltinFn    "\<\%(tma_load\|tma_store\|tma_reduce_add\|bytes_of\)\ze\s*("
syn match   kdslBuiltinFn    "\<\%(size_of\)\ze\s*("
syn match   kdslBuiltinFn    "\<\%(load2\|load4\|store2\|store4\)\ze\s*("
syn match   kdslBuiltinFn    "\<\%(acc_row\|acc_col\|row_max\|row_sum\|row_scale\|row_exp2\|acc_convert\|wgmma\|wgmma_commit\|wgmma_wait\|set_max_regs\)\ze\s*("
" Barrier operations: `full[s].wait(0)`, `ready.sync()`.
syn match   kdslBarrierOp    "\.\zs\%(arrive\|arrive_expect_tx\|expect_tx\|arrive_remote\|wait\|test\|wait_cluster\|test_cluster\|sync\)\ze\s*("
" Launch attributes after the parameter list, and barrier scopes.
syn match   kdslAttribute    ")\s*\zs\<\%(block\|cluster\)\ze\s*("
syn match   kdslScope        "\<\h\w*\ze\s*(\s*arrivals\s*="
syn match   kdslFunction     "\<\%(fn\|kernel\)\s\+\zs\h\w*"

" Numbers: hex, binary, floats (digits on both sides of the dot, so `0..n`
" is a range), integers, each with an optional type suffix.
syn match   kdslNumber       "\<0x[0-9A-Fa-f_]\+\%([iu]\%(32\|64\)\)\=\>"
syn match   kdslNumber       "\<0b[01_]\+\%([iu]\%(32\|64\)\)\=\>"
syn match   kdslNumber       "\<\d[0-9_]*\%([iu]\%(32\|64\)\|b\=f16\|f32\|f64\)\=\>"
syn match   kdslFloat        "\<\d[0-9_]*\.\d[0-9_]*\%([eE][+-]\=\d[0-9_]*\)\=\%(b\=f16\|f32\|f64\)\=\>"
syn match   kdslFloat        "\<\d[0-9_]*[eE][+-]\=\d[0-9_]*\%(b\=f16\|f32\|f64\)\=\>"

syn region  kdslString       start=+"+ skip=+\\.+ end=+"+ contains=kdslEscape
syn match   kdslEscape       contained "\\."

" Block comments nest.
syn keyword kdslTodo         contained TODO FIXME XXX NOTE
syn region  kdslComment      start="//" end="$" contains=kdslTodo,@Spell
syn region  kdslBlockComment start="/\*" end="\*/" contains=kdslBlockComment,kdslTodo,@Spell

hi def link kdslKeyword      Keyword
hi def link kdslConditional  Conditional
hi def link kdslRepeat       Repeat
hi def link kdslStatement    Statement
hi def link kdslStorage      StorageClass
hi def link kdslOperatorWord Operator
hi def link kdslBoolean      Boolean
hi def link kdslType         Type
hi def link kdslBuiltinVar   Identifier
hi def link kdslBuiltinFn    Function
hi def link kdslBarrierOp    Function
hi def link kdslAttribute    PreProc
hi def link kdslScope        StorageClass
hi def link kdslFunction     Function
hi def link kdslNumber       Number
hi def link kdslFloat        Float
hi def link kdslString       String
hi def link kdslEscape       SpecialChar
hi def link kdslTodo         Todo
hi def link kdslComment      Comment
hi def link kdslBlockComment Comment

let b:current_syntax = 'kdsl'
