" *.rules files are rulesdsl rules. Vim's own rule for them keeps udev's, polkit's and ufw's, and calls
" every other one Snort's 'hog': that guess is replaced (its ftplugin leaves b:did_ftplugin behind).
autocmd BufRead,BufNewFile *.rules
      \ if &filetype ==# '' || &filetype ==# 'hog' | unlet! b:did_ftplugin | setlocal filetype=rules | endif
