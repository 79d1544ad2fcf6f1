# Completes lines in a real interactive zsh, as a user pressing TAB would:
#   zsh -f zsh_complete.zsh FPATH_DIR LINE...
# starts zsh on a pseudo-terminal (zsh/zpty) with compinit and FPATH_DIR first
# in fpath, types each LINE and a TAB, and prints what the line editor then
# shows, one "LINE => SHOWN" per LINE (terminal escapes left for the caller).
zmodload zsh/zpty
fdir=$1
shift
zpty z zsh -f -i
zpty -w z "fpath=($fdir \$fpath); autoload -U compinit; compinit -u -D; PROMPT='%% '; unsetopt beep"
sleep 1
for typed in "$@"; do
  while zpty -r -t z junk; do :; done
  zpty -w -n z "$typed"$'\t'
  sleep 1.5   # the completion runs strata for branch and workspace names
  out=""
  while zpty -r -t z chunk; do out+=$chunk; done
  out=${out//$'\r'/}
  print -r -- "$typed => ${out##*$'\n'}"
  zpty -w -n z $'\x15'  # ^U clears the line for the next one
  sleep 0.3
done
zpty -d z
