#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Smoke test of an installed isd (a package, or `meson install`), run as a
# normal user: the program, its data files, man pages and shell
# completions where a distribution puts them.  One line per check ("ok - ",
# "FAIL - ", "skip - "), then "smoke test done"; exits 1 when a check failed.
#
# Usage: packaging/smoke-test.sh [ISD]    (default: isd on PATH)
set -u
ISD=${1:-$(command -v isd)}
. "$(dirname "${BASH_SOURCE[0]}")/check-lib.sh"

# contains NAME PATTERN COMMAND...: the output of COMMAND matches PATTERN.
contains() {
	local name=$1 pattern=$2 out
	shift 2
	out=$("$@" 2>&1)
	if grep -qE -- "$pattern" <<<"$out"; then
		pass "$name"
	else
		fail "$name (no /$pattern/ in the output)"
		printf '%s\n' "$out" | tail -20 | sed 's/^/    /'
	fi
}

if [ -z "$ISD" ] || [ ! -x "$ISD" ]; then
	fail "isd is installed"
	echo "smoke test done"
	exit 1
fi
PREFIX=$(cd "$(dirname "$ISD")/.." && pwd)
DATA=$PREFIX/share
echo "isd: $ISD (prefix $PREFIX), as $(id -un)"

contains "isd --version" '^isd [0-9]+\.[0-9]+' "$ISD" --version
check "isd exec -- true" "$ISD" exec --no-tty -- true
contains "the root is read-only inside" '^read-only$' \
	"$ISD" exec --no-tty -- sh -c 'touch /usr/isd-smoke 2>/dev/null && echo writable || echo read-only'
check "isd seccomp check default (the installed default profile compiles)" "$ISD" seccomp check default
contains "isd exec --print-spec" '"seccomp": "default"' "$ISD" exec --print-spec -- true
contains "isd profile list finds the installed agent profile" \
	"agent +$DATA/isd/profiles/agent.conf" "$ISD" profile list
contains "isd seccomp list finds the installed profiles" \
	"default +$DATA/isd/seccomp-profiles/default.json" "$ISD" seccomp list
contains "isd image ls runs libexec/isd/isd-build" '^NAME' "$ISD" image ls
contains "isd session list" '^ID' "$ISD" session list
contains "isd doctor --json" '"agent_profile_ready"' "$ISD" doctor --json
contains "the AppArmor profile names the installed isd" "^profile isd $PREFIX/bin/isd " \
	cat "$DATA/isd/apparmor/isd" /etc/apparmor.d/isd

# Man pages: found by man(1) as the user would look them up.
if command -v man >/dev/null; then
	for page in isd isd-exec isd-build isd-doctor isd-session 5:isd.profile 5:isd-seccomp; do
		sect=
		[[ $page == *:* ]] && { sect=${page%%:*}; page=${page#*:}; }
		check "man -w ${sect:+$sect }$page" man -w $sect "$page"
	done
	contains "isd-exec(1) documents --workspace" 'workspace DIR\[:MODE\]' \
		env MANWIDTH=100 man -P cat isd-exec
else
	skip "man pages: man(1) is not installed"
fi

# Completions, loaded the way each shell loads them.
bashcomp=$DATA/bash-completion/completions/isd
if [ -f /usr/share/bash-completion/bash_completion ]; then
	contains "bash-completion loads isd's completion on demand" 'complete -F _isd isd' \
		bash -c '. /usr/share/bash-completion/bash_completion; __load_completion isd; complete -p isd'
fi
bash_complete() { # LINE: the candidates bash offers at the end of LINE
	bash -c '. "$1"; COMP_LINE=$2; COMP_POINT=${#2}; read -ra COMP_WORDS <<<"$2"
		[[ $2 == *" " ]] && COMP_WORDS+=(""); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_isd; printf "%s\n" "${COMPREPLY[@]}"' bash "$bashcomp" "$1"
}
contains "bash: subcommands" '^session$' bash_complete "isd "
contains "bash: exec options" '^--workspace$' bash_complete "isd exec --works"
contains "bash: profile names from isd profile list" '^agent$' bash_complete "isd exec --profile "
contains "bash: seccomp profile names" '^seccomp=nested$' bash_complete "isd exec --security-opt "

if command -v zsh >/dev/null; then
	zshcomp=$(ls "$DATA"/zsh/vendor-completions/_isd "$DATA"/zsh/site-functions/_isd 2>/dev/null | head -1)
	check "zsh: _isd is installed and parses" zsh -n "$zshcomp"
	# A real completion through compinit in a pseudo-terminal (zpty).
	zsh_complete() {
		local hits
		hits=$(mktemp)
		zsh -f -c '
			zmodload zsh/zpty
			zpty z zsh -f -i
			zpty -w z "PS1=; fpath=($1 \$fpath); autoload -U compinit; compinit -u -D"
			zpty -w z "compadd () { builtin compadd -O __h \"\$@\"; print -rl -- \$__h >>$2; builtin compadd \"\$@\" }"
			sleep 0.5
			zpty -w -n z "$3"$'"'"'\t'"'"'
			sleep 2
			zpty -d z' zsh "$(dirname "$zshcomp")" "$hits" "$1"
		cat "$hits"
		rm -f "$hits"
	}
	contains "zsh: exec options" '^--workspace$' zsh_complete "isd exec --works"
	contains "zsh: profile names" '^agent$' zsh_complete "isd exec --profile "
else
	skip "zsh is not installed"
fi

if command -v fish >/dev/null; then
	contains "fish: exec options" '^--workspace' fish -c 'complete -C "isd exec --works"'
	contains "fish: profile names" '^agent' fish -c 'complete -C "isd exec --profile "'
	contains "fish: session subcommands" '^list' fish -c 'complete -C "isd session "'
else
	skip "fish is not installed"
fi

echo "smoke test done"
[ "$FAIL" -eq 0 ]
