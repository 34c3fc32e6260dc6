# What zsh completes for a command line, through its real completion system in a pty (zsh/zpty).
# usage: zsh zsh-complete.zsh SCRIPT HITS_FILE "words to complete"; prints the candidates, one per line.
zmodload zsh/zpty || exit 2
local setup=${2}.setup.zsh
cat > $setup <<SETUP
PROMPT=''; RPROMPT=''
autoload -U compinit && compinit -u -D
source ${(q)1}
compadd () {
  if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then builtin compadd "\$@"; return \$?; fi
  typeset -a __hits
  builtin compadd -A __hits "\$@"
  local r=\$?
  (( \$#__hits )) && print -rl -- "\${__hits[@]}" >> ${(q)2}
  return \$r
}
comp-done() { zle complete-word; print -r -- "<done>" >> ${(q)2}.done }
zle -N comp-done
bindkey '^I' comp-done
SETUP
: > $2; rm -f $2.done
zpty z zsh -f -i
zpty -w z "source ${(q)setup}"
zpty -n -w z "$3"$'\t'
integer i=0
while (( i++ < 200 )) && [[ ! -e $2.done ]]; do zpty -r -t z line; sleep 0.05; done
zpty -d z
[[ -e $2.done ]] || { print "no completion ran"; exit 1 }
sort -u $2
