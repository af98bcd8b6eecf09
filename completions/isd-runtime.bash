# SPDX-License-Identifier: LGPL-2.1-or-later
# bash completion for isd-runtime(8).  Installed as
# PREFIX/share/bash-completion/completions/isd-runtime.  Container ids come
# from isd-runtime list -q (with the --root given on the line).

_isd_runtime() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local cmds='create start run state kill delete list ps exec pause resume update features spec'
	local global='--root --log --log-format --systemd-cgroup --debug --version --help'
	local i cmd= root=()
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--root) root=(--root "${COMP_WORDS[i+1]}"); ((i++)) ;;
		--log|--log-format) ((i++)) ;;
		-*) ;;
		*) cmd=${COMP_WORDS[i]}; break ;;
		esac
	done
	case $prev in
	--root|--bundle|-b) COMPREPLY=($(compgen -d -- "$cur")); return ;;
	--log|--pid-file|--console-socket|--process|-p|--resources|-r) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--log-format) COMPREPLY=($(compgen -W 'text json' -- "$cur")); return ;;
	--format|-f) COMPREPLY=($(compgen -W 'table json' -- "$cur")); return ;;
	esac
	if [[ -z $cmd ]]; then
		COMPREPLY=($(compgen -W "$global $cmds" -- "$cur"))
		return
	fi
	local opts=
	case $cmd in
	create) opts='--bundle --pid-file --console-socket --no-pivot --no-new-keyring' ;;
	run) opts='--bundle --pid-file --console-socket --detach --no-pivot --no-new-keyring' ;;
	kill) opts='--all' ;;
	delete) opts='--force' ;;
	list) opts='--format --quiet' ;;
	ps) opts='--format' ;;
	exec) opts='--process --tty --console-socket --detach --pid-file --cwd --env --user' ;;
	update) opts='--resources --memory --memory-swap --memory-reservation --cpu-quota --cpu-period --cpu-share --cpuset-cpus --pids-limit --blkio-weight' ;;
	spec) opts='--rootless --bundle' ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts --help" -- "$cur"))
	elif [[ $cmd != create && $cmd != run && $cmd != list && $cmd != features && $cmd != spec ]]; then
		COMPREPLY=($(compgen -W "$(isd-runtime "${root[@]}" list -q 2>/dev/null)" -- "$cur"))
	fi
}
complete -F _isd_runtime isd-runtime
