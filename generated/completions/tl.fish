complete --keep-order --exclusive --command tl --arguments "(COMPLETE=fish tl -- (commandline --current-process --tokenize --cut-at-cursor) (commandline --current-token))"
