# Completes lines in a real interactive zsh, as a user pressing TAB would:
#   zsh -f zsh_complete.zsh FPATH_DIR OUTFILE LINE...
# starts zsh on a pseudo-terminal (zsh/zpty) with compinit and FPATH_DIR first
# in fpath, and for each LINE types it, a TAB, then ^G, bound to a widget that
# appends the line editor's buffer to OUTFILE and clears it. zle takes keys in
# order, so each buffer is written after its completion has finished, however
# long strata took to list names. Exits 1 if the lines are not all written
# within a minute.
zmodload zsh/zpty
fdir=$1 outfile=$2
shift 2
: > "$outfile"
zpty z zsh -f -i
zpty -w z "fpath=($fdir \$fpath); autoload -U compinit; compinit -u -D; unsetopt beep"
zpty -w z "record() { print -r -- \"\$BUFFER\" >> ${(q)outfile}; BUFFER=''; }; zle -N record; bindkey '^G' record"
for typed in "$@"; do
  zpty -w -n z "$typed"$'\t\a'
done
for (( i = 0; i < 600; i++ )); do
  (( $(wc -l < "$outfile") >= $# )) && break
  while zpty -r -t z junk; do :; done  # keep the terminal drained
  sleep 0.1
done
zpty -d z
(( $(wc -l < "$outfile") >= $# ))
