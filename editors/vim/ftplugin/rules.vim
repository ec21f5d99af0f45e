" rulesdsl rules: comments start with #.
if exists("b:did_ftplugin")
  finish
endif
let b:did_ftplugin = 1
setlocal commentstring=#\ %s comments=:# formatoptions-=t
let b:undo_ftplugin = "setlocal commentstring< comments< formatoptions<"
