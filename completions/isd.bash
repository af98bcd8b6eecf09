# SPDX-License-Identifier: LGPL-2.1-or-later
# bash completion for isd(1).
#
# Installed as PREFIX/share/bash-completion/completions/isd; works on its own
# (source it) and uses bash-completion's helpers only when they are loaded.

# The data directory this file was installed under (PREFIX/share), so that
# the seccomp profiles of a non-/usr prefix are found too.
_isd_datadir=${BASH_SOURCE[0]%/bash-completion/completions/*}
[[ $_isd_datadir == "${BASH_SOURCE[0]}" ]] && _isd_datadir=

# isd exec options, as src/cli-table.c has them (tests/unit/test-cli-table.c
# checks that these lists agree with it).
# Refused ones (--cap-add, --privileged) are parsed below but never offered.
_isd_exec_opts_arg='--env --env-file --volume --mount --tmpfs --device --gpus --cdi-spec-dir --workdir --user
    --hostname --network --net --rootfs --image --security-opt --pid --ipc
    --profile --agent --agent-state --project --workspace --session --mask
    --unmask --allow --allow-file --add-host --activity-log
    --forward --forward-unix --publish --proxy-port --network-log
    --cap-drop --cap-add --memory --memory-swap --memory-reservation --cpus
    --cpu-shares --cpu-weight --cpuset-cpus --pids-limit --blkio-weight --limits
    --storage-opt --isolation'
_isd_exec_opts_noarg='--print-spec --rm --interactive --tty --no-tty
    --read-only --privileged --init --help --workspace-keep --git-writable
    --unsafe-host-root'
_isd_exec_offer='--env --env-file --volume --mount --tmpfs --device --gpus --cdi-spec-dir --workdir --user
    --hostname --network --net --rootfs --image --security-opt --pid --ipc
    --profile --agent --agent-state --project --workspace --workspace-keep
    --session --activity-log --mask --unmask --git-writable --allow --allow-file --add-host
    --forward --forward-unix --publish --proxy-port --network-log
    --cap-drop --memory --memory-swap --memory-reservation --cpus --cpu-shares
    --cpu-weight --cpuset-cpus --pids-limit --blkio-weight --limits --storage-opt
    --isolation --print-spec --rm --interactive --tty --no-tty --read-only --init --help
    --unsafe-host-root -e -v -w -u -h -p -i -t --'

# The agents isd knows (src/profile.c): their command brings the agent
# profile, and --agent-state knows where they keep their state.
_isd_agents='omp claude codex pi gemini opencode aider goose amp'

_isd_agent_names()
{
    local a
    for a in $_isd_agents; do
        printf '%s\n' "$a"
    done
}

# $XDG_x_HOME when absolute, as isd reads it, else $HOME/fallback.
_isd_xdg()
{
    local v=${!1-}
    if [[ $v == /* ]]; then
        printf '%s\n' "$v"
    else
        printf '%s\n' "${HOME-}/$2"
    fi
}

# The names NAME of the files NAME$2 in the directories isd searches for
# $1 (seccomp-profiles or profiles): $XDG_CONFIG_HOME/isd/$1, /etc/isd/$1,
# PREFIX/share/isd/$1, and the source tree when sourced from there.
_isd_names_in()
{
    local d f n
    local -a dirs=("$(_isd_xdg XDG_CONFIG_HOME .config)/isd/$1"
        "/etc/isd/$1" "/usr/share/isd/$1" "/usr/local/share/isd/$1")
    [[ $_isd_datadir ]] && dirs+=("$_isd_datadir/isd/$1")
    # Sourced from a source tree: completions/../seccomp-profiles, ../profiles.
    [[ ${BASH_SOURCE[0]} == */completions/isd.bash ]] &&
        dirs+=("${BASH_SOURCE[0]%/completions/isd.bash}/$1")
    for d in "${dirs[@]}"; do
        for f in "$d"/*"$2"; do
            [[ -f $f ]] || continue
            n=${f##*/}
            n=${n%"$2"}
            [[ $n && $n != .* ]] && printf '%s\n' "$n"
        done
    done | sort -u
}

# The isd being completed (./build/src/isd, ~/bin/isd, or isd on PATH).
_isd_bin()
{
    local b=${_isd_words[0]-isd}
    [[ $b == "~/"* ]] && b=${HOME-}/${b#"~/"}
    if [[ $b == */* && -x $b ]]; then
        printf '%s\n' "$b"
    else
        printf '%s\n' isd
    fi
}

# The first column of "isd $@" (below its header line when $1 is -h).
# Fails when isd cannot say.
_isd_column()
{
    local skip=0 out
    [[ $1 == -h ]] && { skip=1; shift; }
    out=$("$(_isd_bin)" "$@" 2>/dev/null) || return 1
    awk -v skip="$skip" 'NR > skip && $1 != "" {print $1}' <<<"$out"
}

# Seccomp profiles for --security-opt seccomp= and isd seccomp check:
# isd seccomp list, else the directories it searches.
_isd_seccomp_names()
{
    _isd_column seccomp list && return
    printf '%s\n' unconfined
    _isd_names_in seccomp-profiles .json
}

# Option profiles (*.conf) for --profile and isd profile show|edit: isd
# profile list (without the built-in none), else the directories.
_isd_profile_names()
{
    local n
    if n=$(_isd_column profile list); then
        grep -vx none <<<"$n"
        return 0
    fi
    _isd_names_in profiles .conf
}

# The images of the store: isd image ls, else $XDG_DATA_HOME/isd/images/NAME.
_isd_store_names()
{
    _isd_column -h image ls && return
    local f
    for f in "$(_isd_xdg XDG_DATA_HOME .local/share)"/isd/images/*; do
        [[ -d $f && ${f##*/} != .* ]] && printf '%s\n' "${f##*/}"
    done
}

# Copy-on-write sessions: isd session list.
_isd_session_ids()
{
    _isd_column -h session list
}

# What the agent profile masks, as examples for --mask and --unmask.
_isd_mask_globs='.env
.env.*
*.pem
*.key
id_rsa*
id_ed25519*
.npmrc
.pypirc
.netrc
.git-credentials
.aws/
.ssh/
.gnupg/'

# Values of --image: the built-in host and the store's images.
_isd_image_names()
{
    printf '%s\n' host
    _isd_store_names
}

# Add the words of $2 (newline-separated) that start with $1 to COMPREPLY.
_isd_add()
{
    local w
    while IFS= read -r w; do
        [[ $w && $w == "$1"* ]] && COMPREPLY+=("$w")
    done <<<"$2"
}

# Append the output lines of compgen "$@" to COMPREPLY.
_isd_compgen()
{
    local w
    while IFS= read -r w; do
        COMPREPLY+=("$w")
    done < <(compgen "$@" 2>/dev/null)
}

_isd_files()  # $1 prefix, $2 -d for directories only
{
    compopt -o filenames 2>/dev/null
    _isd_compgen "${2:--f}" -- "$1"
}

# Append "$1PATH" for each path completing $2 (-f, or $3 = -d for
# directories only), with a slash after directories; no space after it.
_isd_paths()
{
    local p
    while IFS= read -r p; do
        [[ -d $p ]] && p+=/
        COMPREPLY+=("$1$p")
    done < <(compgen "${3:--f}" -- "$2" 2>/dev/null)
    _isd_nospace
}

_isd_nospace()
{
    compopt -o nospace 2>/dev/null
}

# Completes the value $2 of exec option $1 into COMPREPLY (full words: the
# caller trims what bash already treats as a separate word).
_isd_exec_value()
{
    local opt=$1 cur=$2 head tail
    case $opt in
    --network | --net) _isd_add "$cur" $'none\nhost\nprivate\nnetless' ;;
    --profile)
        if [[ $cur == */* || $cur == .* ]]; then
            _isd_files "$cur"
        else
            _isd_add "$cur" "$(_isd_profile_names; printf '%s\n' none)"
        fi
        ;;
    --agent | --agent-state) _isd_add "$cur" "$(_isd_agent_names)" ;;
    --project) _isd_files "$cur" -d ;;
    --workspace)
        # DIR[:rw|ro|cow]
        if [[ $cur == *:* ]]; then
            head=${cur%:*}
            _isd_add "$cur" "$head:rw"$'\n'"$head:ro"$'\n'"$head:cow"
        else
            _isd_paths "" "$cur" -d
            [[ $cur && -d $cur ]] && COMPREPLY+=("$cur:")
        fi
        ;;
    --session) _isd_add "$cur" "$(_isd_session_ids)" ;;
    --mask | --unmask)
        _isd_add "$cur" "$_isd_mask_globs"
        _isd_files "$cur"
        ;;
    --allow-file | --network-log) _isd_files "$cur" ;;
    --forward-unix)
        # SANDBOX_PATH:HOST_PATH; the host path is an existing socket.
        if [[ $cur == *:* ]]; then
            _isd_paths "${cur%%:*}:" "${cur#*:}"
        else
            _isd_add "$cur" $'/run/\n/tmp/'
            _isd_nospace
        fi
        ;;
    --pid) _isd_add "$cur" $'private\nhost' ;;
    --ipc) _isd_add "$cur" $'private\nnone' ;;
    --limits) _isd_add "$cur" $'strict\nbest-effort' ;;
    --isolation) _isd_add "$cur" $'full\nauto\nlandlock' ;;
    --storage-opt) _isd_add "$cur" $'size=\ninodes=\nmin-free=' ;;
    --cap-drop) _isd_add "$cur" ALL ;;
    --image) _isd_add "$cur" "$(_isd_image_names)" ;;
    --rootfs | --workdir | -w) _isd_files "$cur" -d ;;
    --env-file) _isd_files "$cur" ;;
    --user | -u) _isd_compgen -u -- "$cur" ;;
    --env | -e) [[ $cur == *=* ]] || _isd_compgen -e -- "$cur" ;;
    --security-opt)
        if [[ $cur == seccomp[=:]*/* ]]; then
            _isd_paths "${cur:0:8}" "${cur:8}"
        else
            head=seccomp=
            [[ $cur == seccomp:* ]] && head=seccomp:
            local n
            while IFS= read -r n; do
                [[ $head$n == "$cur"* ]] && COMPREPLY+=("$head$n")
            done < <(_isd_seccomp_names)
            [[ no-new-privileges == "$cur"* ]] && COMPREPLY+=(no-new-privileges)
            [[ landlock=off == "$cur"* ]] && COMPREPLY+=(landlock=off)
        fi
        ;;
    --volume | -v)
        # SRC:DST[:ro|rw]
        if [[ $cur == *:*:* ]]; then
            head=${cur%:*}
            _isd_add "$cur" "$head:ro"$'\n'"$head:rw"
        elif [[ $cur == *:* ]]; then
            head=${cur%%:*}
            tail=${cur#*:}
            # The usual choice is the same path inside; then :ro or :rw.
            [[ $head == "$tail"* && $head != "$tail" ]] &&
                COMPREPLY+=("$head:$head")
            [[ $tail == "$head" ]] &&
                COMPREPLY+=("$head:$head:ro" "$head:$head:rw")
            # DST is a path inside the sandbox, always absolute.
            [[ $tail == /* ]] && _isd_paths "$head:" "$tail" -d
            _isd_nospace
        else
            _isd_paths "" "$cur"
            # An existing source: offer going on to the destination.
            [[ $cur && -e $cur ]] && COMPREPLY+=("$cur:")
            _isd_nospace
        fi
        ;;
    --gpus) _isd_add "$cur" all ;;
    --cdi-spec-dir) _isd_files "$cur" -d ;;
    --device)
        # HOST[:CONTAINER][:PERMS]: a node or a directory of them; or a
        # CDI name VENDOR/CLASS=NAME
        if [[ $cur == *=* ]]; then
            _isd_add "$cur" "${cur%%=*}=all"
        elif [[ $cur == *:* ]]; then
            _isd_add "$cur" "${cur%:*}:r"$'\n'"${cur%:*}:rw"
        else
            [[ $cur ]] || cur=/dev/
            _isd_paths "" "$cur"
        fi
        ;;
    --tmpfs)
        # DST[:OPTS]
        if [[ $cur == *:* ]]; then
            head=${cur%[:,]*}
            head=${cur:0:${#head}+1}
            local o
            for o in rw ro exec noexec size= mode= uid= gid=; do
                [[ $head$o == "$cur"* ]] && COMPREPLY+=("$head$o")
            done
            _isd_nospace
        else
            _isd_add "$cur" "$(printf '%s\n' /tmp /var/tmp /run "${HOME-}")"
            _isd_nospace
        fi
        ;;
    --mount)
        if [[ $cur != *type=* ]]; then
            _isd_add "$cur" $'type=bind,\ntype=tmpfs,'
        else
            head=${cur%,*},
            [[ $cur == *,* ]] || head=
            local o opts
            if [[ $cur == *type=tmpfs* ]]; then
                opts='dst= tmpfs-size= tmpfs-mode= readonly'
            else
                opts='src= dst= readonly'
            fi
            local last=${cur##*,}
            if [[ $last == src=* || $last == source=* || $last == dst=* ||
                $last == destination=* || $last == target=* ]]; then
                _isd_paths "$head${last%%=*}=" "${last#*=}"
            else
                for o in $opts; do
                    [[ $head$o == "$cur"* ]] && COMPREPLY+=("$head$o")
                done
            fi
        fi
        _isd_nospace
        ;;
    esac
}

# Is $1 an exec option that takes a value?  Long options may be abbreviated
# to a unique prefix, as getopt_long allows.
_isd_takes_arg()
{
    local o n=0 hit=
    for o in $_isd_exec_opts_arg $_isd_exec_opts_noarg; do
        if [[ $o == "$1" ]]; then
            hit=$o
            n=1
            break
        fi
        # --net is --network under another name: not ambiguous.
        [[ $o == "$1"* && $o != --net ]] && { hit=$o; ((n++)); }
    done
    ((n == 1)) || return 1
    _isd_longopt=$hit
    [[ " $_isd_exec_opts_arg " == *[[:space:]]"$hit"[[:space:]]* ]]
}

# Joins the words bash split at '=' and ':' (COMP_WORDBREAKS) back together.
# Sets _isd_words, _isd_cword and _isd_raw (raw index of each word's start).
_isd_reassemble()
{
    local i j=0 line=${COMP_LINE-} glue=0 w
    _isd_words=() _isd_raw=() _isd_cword=$COMP_CWORD
    for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
        w=${COMP_WORDS[i]}
        local blank=0
        if [[ $line ]]; then
            [[ $line == [[:blank:]]* ]] && blank=1
            line=${line#*"$w"}
        fi
        if ((i > 1)) && [[ $w =~ ^[=:]+$ ]] && ((!blank)); then
            _isd_words[j - 1]+=$w
            glue=1
        elif ((glue)) && ((!blank)) && ((j > 0)); then
            _isd_words[j - 1]+=$w
            glue=0
        else
            _isd_words[j]=$w
            _isd_raw[j]=$i
            ((j++))
            glue=0
        fi
        ((i == COMP_CWORD)) && _isd_cword=$((j - 1))
    done
    # Cursor after the last word, on a new empty one.
    if ((COMP_CWORD >= ${#COMP_WORDS[@]})); then
        _isd_words[j]=
        _isd_raw[j]=$COMP_CWORD
        _isd_cword=$j
    fi
}

_isd_exec()
{
    local -i i=$1
    local w cur=${_isd_words[_isd_cword]} want_value=

    # Walk the words before the cursor the way getopt_long("+...") does.
    while ((i < _isd_cword)); do
        w=${_isd_words[i]}
        if [[ $w == -- ]]; then
            _isd_command $((i + 1))
            return
        elif [[ $w == --*=* ]]; then
            :
        elif [[ $w == --?* ]]; then
            if _isd_takes_arg "$w"; then
                ((i++))
                ((i == _isd_cword)) && want_value=$_isd_longopt
            fi
        elif [[ $w == -?* ]]; then
            local k c
            for ((k = 1; k < ${#w}; k++)); do
                c=${w:k:1}
                if [[ $c == [evwuhp] ]]; then
                    if ((k == ${#w} - 1)); then
                        ((i++))
                        ((i == _isd_cword)) && want_value=-$c
                    fi
                    break
                fi
            done
        else
            # The command: options end here.
            _isd_command "$i"
            return
        fi
        ((i++))
    done

    if [[ $want_value ]]; then
        _isd_exec_value "$want_value" "$cur"
    elif [[ $cur == --*=* ]]; then
        local opt=${cur%%=*}
        if _isd_takes_arg "$opt"; then
            local -a before=("${COMPREPLY[@]}")
            _isd_exec_value "$_isd_longopt" "${cur#*=}"
            local -i n
            for ((n = ${#before[@]}; n < ${#COMPREPLY[@]}; n++)); do
                COMPREPLY[n]=$opt=${COMPREPLY[n]}
            done
        fi
    elif [[ $cur == -* ]]; then
        local o
        for o in $_isd_exec_offer; do
            [[ $o == "$cur"* ]] && COMPREPLY+=("$o")
        done
    else
        _isd_command "$_isd_cword"
    fi
}

# The payload's command line starts at word $1.
_isd_command()
{
    if declare -F _command_offset >/dev/null && [[ ${COMP_LINE-} ]]; then
        _command_offset "${_isd_raw[$1]}"
        _isd_trimmed=1
    elif (($1 == _isd_cword)); then
        _isd_compgen -c -- "${_isd_words[_isd_cword]}"
    else
        _isd_files "${_isd_words[_isd_cword]}"
    fi
}

# isd build -t NAME [-f FILE] [--build-arg K[=V]] [--pull] [--no-cache]
# [--ca-file FILE] [--keyring FILE] [-q] [CONTEXT], as rootfs-builder/build.c
# parses it.
_isd_build()
{
    local -i i=2
    local w o cur=${_isd_words[_isd_cword]} want='' context=''
    local opts_arg='--tag --file --build-arg --ca-file --keyring'
    local opts_noarg='--pull --no-cache --quiet --help'

    while ((i < _isd_cword)); do
        w=${_isd_words[i]}
        if [[ $w == --*=* ]]; then
            :
        elif [[ $w == --?* ]]; then
            local hit='' n=0
            for o in $opts_arg $opts_noarg; do
                if [[ $o == "$w" ]]; then
                    hit=$o n=1
                    break
                fi
                [[ $o == "$w"* ]] && { hit=$o; ((n++)); }
            done
            if ((n == 1)) && [[ " $opts_arg " == *" $hit "* ]]; then
                ((i++))
                ((i == _isd_cword)) && want=$hit
            fi
        elif [[ $w == -?* ]]; then
            # -t NAME, -f FILE, -q, -h; -tNAME and -qt NAME too.
            local k
            for ((k = 1; k < ${#w}; k++)); do
                if [[ ${w:k:1} == [tf] ]]; then
                    if ((k == ${#w} - 1)); then
                        ((i++))
                        ((i == _isd_cword)) && want=-${w:k:1}
                    fi
                    break
                fi
            done
        else
            context=$w
        fi
        ((i++))
    done

    case $want in
    --tag | -t) _isd_add "$cur" "$(_isd_store_names)" ;;
    --file | -f | --ca-file | --keyring) _isd_files "$cur" ;;
    --build-arg) [[ $cur == *=* ]] || _isd_compgen -e -- "$cur" ;;
    *)
        if [[ $cur == --*=* ]]; then
            case ${cur%%=*} in
            --t | --ta | --tag)
                _isd_add "${cur#*=}" "$(_isd_store_names)" ;;
            --f | --fi | --fil | --file)
                _isd_files "${cur#*=}" ;;
            esac
            local -i n
            for ((n = 0; n < ${#COMPREPLY[@]}; n++)); do
                COMPREPLY[n]=${cur%%=*}=${COMPREPLY[n]}
            done
        elif [[ $cur == -* ]]; then
            for o in $opts_arg $opts_noarg -t -f -q -h; do
                [[ $o == "$cur"* ]] && COMPREPLY+=("$o")
            done
        elif [[ ! $context ]]; then
            _isd_files "$cur" -d
        fi
        ;;
    esac
}

# isd image ls|list|inspect NAME|rm NAME...|prune|help
_isd_image()
{
    local cur=${_isd_words[_isd_cword]}

    if ((_isd_cword == 2)); then
        _isd_add "$cur" $'ls\nlist\ninspect\nrm\nprune\nhelp'
        return
    fi
    case ${_isd_words[2]} in
    inspect) ((_isd_cword == 3)) && _isd_add "$cur" "$(_isd_store_names)" ;;
    rm) _isd_add "$cur" "$(_isd_store_names)" ;;
    esac
}

# isd diff [ID] [--stat] [--name-only] [--ignored] [--color[=WHEN]] [PATH...], isd apply [ID] [--force]
# [--include-ignored] [--allow-git-exec] [--allow-history-loss] [PATH...]: options, a session id, paths of the project.
_isd_session_cmd()
{
    local cur=${_isd_words[_isd_cword]} opts
    case ${_isd_words[1]} in
    diff) opts=$'--stat\n--name-only\n--ignored\n--color\n--color=always\n--color=never\n--color=auto\n--help' ;;
    apply) opts=$'--force\n--include-ignored\n--allow-git-exec\n--allow-history-loss\n--state\n--help' ;;
    esac
    if [[ $cur == -* ]]; then
        _isd_add "$cur" "$opts"
        return
    fi
    local -i i n=0
    for ((i = 2; i < _isd_cword; i++)); do
        [[ ${_isd_words[i]} == -* ]] || ((n++))
    done
    ((n == 0)) && _isd_add "$cur" "$(_isd_session_ids)"
    _isd_files "$cur"
}

# isd profile list|show NAME|edit NAME
_isd_profile()
{
    local cur=${_isd_words[_isd_cword]}

    if ((_isd_cword == 2)); then
        _isd_add "$cur" $'list\nshow\nedit'
    elif ((_isd_cword == 3)); then
        case ${_isd_words[2]} in
        show)
            # A name, or the path of a profile file.
            if [[ $cur == */* || $cur == .* ]]; then
                _isd_files "$cur"
            else
                _isd_add "$cur" "$(_isd_profile_names)"
            fi
            ;;
        edit) _isd_add "$cur" "$(_isd_profile_names)" ;;
        esac
    fi
}

_isd()
{
    local _isd_words _isd_raw _isd_cword _isd_longopt _isd_trimmed=
    COMPREPLY=()
    _isd_reassemble
    local cur=${_isd_words[_isd_cword]}

    if ((_isd_cword == 1)); then
        local w
        for w in exec run build image profile session diff apply log discard state \
            resume doctor seccomp gc version help --version --help; do
            [[ $w == "$cur"* ]] && COMPREPLY+=("$w")
        done
        return 0
    fi

    case ${_isd_words[1]} in
    exec | run)
        _isd_exec 2
        ;;
    seccomp)
        if ((_isd_cword == 2)); then
            _isd_add "$cur" $'check\nlist\nhelp'
        elif [[ ${_isd_words[2]} == check ]]; then
            if [[ $cur == -* ]]; then
                _isd_add "$cur" $'--pfc\n--json\n-v\n--verbose'
            elif [[ $cur == */* || $cur == .* ]]; then
                _isd_files "$cur"
            else
                _isd_add "$cur" "$(_isd_seccomp_names)"
            fi
        fi
        ;;
    build)
        _isd_build
        ;;
    image | images)
        _isd_image
        ;;
    profile)
        _isd_profile
        ;;
    session)
        if ((_isd_cword == 2)); then
            _isd_add "$cur" $'list\nprune\nhelp'
        elif [[ ${_isd_words[2]} == list || ${_isd_words[2]} == ls ]]; then
            ((_isd_cword == 3)) && _isd_add "$cur" --json
        elif [[ ${_isd_words[2]} == prune ]]; then
            ((_isd_cword == 3)) && _isd_add "$cur" $'--dry-run\n-n'
        fi
        ;;
    diff | apply)
        _isd_session_cmd
        ;;
    discard)
        ((_isd_cword == 2)) && _isd_add "$cur" "$(_isd_session_ids)"$'\n--all'
        ;;
    log)
        if [[ ${_isd_words[_isd_cword - 1]} == --file ]]; then
            _isd_files "$cur"
        elif [[ $cur == -* ]]; then
            _isd_add "$cur" $'--json\n--tree\n--follow\n--file\n--help'
        else
            _isd_add "$cur" "$(_isd_session_ids)"
        fi
        ;;
    state)
        if ((_isd_cword == 2)); then
            _isd_add "$cur" $'list\ndiff\napply\nrestore\ndiscard\n--help'
        elif ((_isd_cword == 3)) && [[ ${_isd_words[2]} != list ]]; then
            _isd_add "$cur" "$(_isd_column -h state list)"
        fi
        ;;
    doctor)
        ((_isd_cword == 2)) && _isd_add "$cur" --json
        ;;
    gc)
        _isd_add "$cur" $'--dry-run\n-n\n--help'
        ;;
    resume)
        _isd_add "$cur" $'--end\n--help'
        ;;
    esac

    # bash replaces only the part of the word after the last '=' or ':' it
    # breaks words at; drop what precedes it from the candidates.
    if [[ ! $_isd_trimmed && ${COMP_WORDBREAKS-} && $cur == *[=:]* ]]; then
        local bc=${COMP_WORDBREAKS//[^=:]/} prefix
        if [[ $bc ]]; then
            prefix=${cur%"${cur##*["$bc"]}"}
            local -i n
            for ((n = 0; n < ${#COMPREPLY[@]}; n++)); do
                COMPREPLY[n]=${COMPREPLY[n]#"$prefix"}
            done
        fi
    fi
    return 0
}

complete -F _isd isd
