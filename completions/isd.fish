# SPDX-License-Identifier: LGPL-2.1-or-later
# fish completion for isd(1).  Installed as
# PREFIX/share/fish/vendor_completions.d/isd.fish.  Profile, image, seccomp
# profile and session names come from isd itself.

# The first column of `isd ARGS` below $argv[1] header lines.
function __isd_column
    set -l skip $argv[1]
    set -e argv[1]
    set -l bin (commandline -opc)[1]
    if not string match -q -- '*/*' $bin; or not test -x $bin
        set bin isd
    end
    command $bin $argv 2>/dev/null | awk -v skip=$skip 'NR > skip && $1 != "" {print $1}'
end

function __isd_profiles
    __isd_column 0 profile list
end

function __isd_images
    __isd_column 1 image ls
end

function __isd_seccomp_profiles
    __isd_column 0 seccomp list
end

function __isd_sessions
    __isd_column 1 session list
end

# The command word of the isd command line (exec, build, ...), or nothing.
function __isd_command
    for w in (commandline -opc)[2..-1]
        switch $w
            case '-*'
            case '*'
                echo $w
                return 0
        end
    end
    return 1
end

function __isd_is
    contains -- (__isd_command) $argv
end

# isd exec: the index in (commandline -opc) of the payload's command, or
# nothing while options are still being read.
function __isd_exec_command_index
    set -l words (commandline -opc)
    set -l takes_value --env --env-file --volume --mount --tmpfs --device --gpus --cdi-spec-dir --workdir --user --hostname \
        --network --net --rootfs --image --security-opt --pid --ipc --profile --agent \
        --agent-state --project --workspace --session --activity-log --mask --unmask --allow --allow-file \
        --add-host --forward --forward-unix --publish --proxy-port --network-log --cap-drop --cap-add \
        --memory --memory-swap --memory-reservation --cpus --cpu-shares --cpu-weight \
        --cpuset-cpus --pids-limit --blkio-weight --limits --storage-opt --isolation -e -v -w -u -h -p
    set -l want_value 0
    # words[1] is isd, words[2] exec or run (no options come before it).
    for i in (seq 3 (count $words))
        set -l w $words[$i]
        if test $want_value = 1
            set want_value 0
            continue
        end
        switch $w
            case --
                echo (math $i + 1)
                return 0
            case '--*=*'
            case '-*'
                contains -- $w $takes_value; and set want_value 1
            case '*'
                echo $i
                return 0
        end
    end
    # The command is the word being typed (or none yet).
    if test $want_value = 0; and not string match -q -- '-*' (commandline -ct)
        echo (math (count $words) + 1)
        return 0
    end
    return 1
end

function __isd_exec_opt
    __isd_is exec run; and not __isd_exec_command_index >/dev/null
end

# Completes the payload's command line like fish would on its own.
function __isd_exec_payload
    set -l i (__isd_exec_command_index); or return
    set -l words (commandline -opc)
    set -l rest
    if test $i -le (count $words)
        set rest (string escape -- $words[$i..-1])
    end
    complete -C (string join ' ' -- $rest (commandline -ct))
end

complete -c isd -f
complete -c isd -n 'not __isd_command >/dev/null' -l version -d 'Print the version'
complete -c isd -n 'not __isd_command >/dev/null' -l help -d 'Print a usage summary'
complete -c isd -n 'not __isd_command >/dev/null' -a exec -d 'Run a command in a new sandbox'
complete -c isd -n 'not __isd_command >/dev/null' -a run -d 'Run a command in a new sandbox (same as exec)'
complete -c isd -n 'not __isd_command >/dev/null' -a build -d 'Build an image from a Containerfile'
complete -c isd -n 'not __isd_command >/dev/null' -a image -d 'List, inspect, remove the built images'
complete -c isd -n 'not __isd_command >/dev/null' -a profile -d 'List, show, edit the option profiles'
complete -c isd -n 'not __isd_command >/dev/null' -a session -d 'List the copy-on-write sessions'
complete -c isd -n 'not __isd_command >/dev/null' -a diff -d 'Show the changes of a session'
complete -c isd -n 'not __isd_command >/dev/null' -a apply -d 'Copy the changes of a session into its project'
complete -c isd -n 'not __isd_command >/dev/null' -a discard -d 'Drop a session and its changes'
complete -c isd -n 'not __isd_command >/dev/null' -a log -d 'Every command a session ran'
complete -c isd -n 'not __isd_command >/dev/null' -a state -d 'The agent state stores'
complete -c isd -n 'not __isd_command >/dev/null' -a doctor -d 'Check what this host allows'
complete -c isd -n 'not __isd_command >/dev/null' -a seccomp -d 'Check and list seccomp profiles'
complete -c isd -n 'not __isd_command >/dev/null' -a resume -d 'Let a sandbox frozen at a storage bound go on'
complete -c isd -n 'not __isd_command >/dev/null' -a gc -d 'Remove cgroups left by crashed runs'
complete -c isd -n '__isd_is resume' -l end -d 'End the sandbox instead'
complete -c isd -n 'not __isd_command >/dev/null' -a version -d 'Print the version'
complete -c isd -n 'not __isd_command >/dev/null' -a help -d 'Print a usage summary'

# isd exec: options until the command, then the command and its arguments.
complete -c isd -n '__isd_is exec run; and __isd_exec_command_index >/dev/null' -a '(__isd_exec_payload)'
complete -c isd -n __isd_exec_opt -l image -x -a '(echo host; __isd_images)' -d 'Image from the store, or host'
complete -c isd -n __isd_exec_opt -l rootfs -x -a '(__fish_complete_directories)' -d 'An unpacked root filesystem'
complete -c isd -n __isd_exec_opt -s v -l volume -r -F -d 'Bind SRC:DST[:ro|rw][,optional]'
complete -c isd -n __isd_exec_opt -l mount -x -a 'type=bind, type=tmpfs,' -d 'A bind or tmpfs mount'
complete -c isd -n __isd_exec_opt -l device -r -F -d 'A host device node HOST[:CONTAINER][:PERMS], or a CDI device'
complete -c isd -n __isd_exec_opt -l gpus -x -a all -d 'The CDI devices nvidia.com/gpu=all'
complete -c isd -n __isd_exec_opt -l cdi-spec-dir -x -a '(__fish_complete_directories)' -d 'Read CDI specs from DIR'
complete -c isd -n __isd_exec_opt -l tmpfs -x -a '/tmp /var/tmp /run' -d 'A tmpfs DST[:OPTS]'
complete -c isd -n __isd_exec_opt -s w -l workdir -x -a '(__fish_complete_directories)' -d 'Working directory inside'
complete -c isd -n __isd_exec_opt -s u -l user -x -a '(__fish_complete_users)' -d 'UID[:GID] the payload sees'
complete -c isd -n __isd_exec_opt -s e -l env -x -a '(set -xn)' -d 'Set or copy NAME[=VALUE]'
complete -c isd -n __isd_exec_opt -l env-file -r -F -d 'NAME=VALUE lines'
complete -c isd -n __isd_exec_opt -s h -l hostname -x -d 'Host name inside'
complete -c isd -n __isd_exec_opt -l network -l net -x -a 'none netless private host' -d 'Network mode'
complete -c isd -n __isd_exec_opt -l allow -x -d 'Allow HOST[:PORT] (netless)'
complete -c isd -n __isd_exec_opt -l allow-file -r -F -d 'Allow rules, one a line'
complete -c isd -n __isd_exec_opt -l add-host -x -d 'NAME:IP in /etc/hosts'
complete -c isd -n __isd_exec_opt -l forward -x -d '[PORT:]HOST:PORT to a host service'
complete -c isd -n __isd_exec_opt -l forward-unix -r -F -d 'SANDBOX_PATH:HOST_PATH unix socket'
complete -c isd -n __isd_exec_opt -s p -l publish -x -d '[IP:]HOST_PORT:SANDBOX_PORT to a server inside'
complete -c isd -n __isd_exec_opt -l proxy-port -x -d 'Netless proxy port'
complete -c isd -n __isd_exec_opt -l network-log -r -F -d 'Log every connection'
complete -c isd -n __isd_exec_opt -l pid -x -a 'private host' -d 'Pid namespace'
complete -c isd -n __isd_exec_opt -l ipc -x -a 'private none' -d 'Accepted and ignored'
complete -c isd -n __isd_exec_opt -l security-opt -x -a '(for p in (__isd_seccomp_profiles); echo seccomp=$p; end; echo landlock=off; echo no-new-privileges)' -d 'Seccomp profile'
complete -c isd -n __isd_exec_opt -l memory -x -d 'Memory limit'
complete -c isd -n __isd_exec_opt -l memory-swap -x -d 'Memory plus swap'
complete -c isd -n __isd_exec_opt -l memory-reservation -x -d 'Soft memory limit'
complete -c isd -n __isd_exec_opt -l cpus -x -d 'CPU quota'
complete -c isd -n __isd_exec_opt -l cpu-shares -x -d 'Relative CPU weight (Docker)'
complete -c isd -n __isd_exec_opt -l cpu-weight -x -d 'cpu.weight'
complete -c isd -n __isd_exec_opt -l cpuset-cpus -x -d 'CPUs to run on'
complete -c isd -n __isd_exec_opt -l pids-limit -x -d 'Maximum number of processes'
complete -c isd -n __isd_exec_opt -l blkio-weight -x -d 'Block I/O weight'
complete -c isd -n __isd_exec_opt -l limits -x -a 'strict best-effort' -d 'When a limit cannot be enforced'
complete -c isd -n __isd_exec_opt -l isolation -x -a 'full auto landlock' -d 'Isolation tier'
complete -c isd -n __isd_exec_opt -l storage-opt -x -a 'size= inodes= min-free=' -d 'Disk bound of the sandbox'
complete -c isd -n __isd_exec_opt -l profile -x -a '(__isd_profiles)' -d 'Options from a profile'
complete -c isd -n __isd_exec_opt -l agent -x -a 'omp claude codex pi gemini opencode aider goose amp' -d 'The agent this sandbox is for'
complete -c isd -n __isd_exec_opt -l agent-state -x -a 'omp claude codex pi gemini opencode aider goose amp' -d "Bind the agent's state"
complete -c isd -n __isd_exec_opt -l project -x -a '(__fish_complete_directories)' -d 'Bind DIR read-write and work there'
complete -c isd -n __isd_exec_opt -l workspace -x -a '(set -l t (commandline -ct); if string match -q -- "*:*" $t; set -l d (string replace -r ":[^:]*\$" "" -- $t); printf "%s\n" $d:rw $d:ro $d:cow; else; __fish_complete_directories $t; end)' -d 'The project DIR[:rw|ro|cow]'
complete -c isd -n __isd_exec_opt -l workspace-keep -d 'Keep the cow session even without changes'
complete -c isd -n __isd_exec_opt -l session -x -a '(__isd_sessions)' -d 'Re-enter a stopped cow session'
complete -c isd -n __isd_exec_opt -l activity-log -r -F -d 'Record every command run inside in FILE'
complete -c isd -n __isd_exec_opt -l mask -x -a ".env '.env.*' '*.pem' '*.key' 'id_rsa*' 'id_ed25519*' .npmrc .pypirc .netrc .git-credentials .aws/ .ssh/ .gnupg/" -d 'Matching files appear empty, read-only'
complete -c isd -n __isd_exec_opt -l unmask -x -a ".env '.env.*' '*.pem' '*.key' 'id_rsa*' 'id_ed25519*' .npmrc .pypirc .netrc .git-credentials .aws/ .ssh/ .gnupg/" -d 'Exempt matching files from the masks'
complete -c isd -n __isd_exec_opt -l git-writable -d 'Leave .git/hooks and .git/config writable'
complete -c isd -n __isd_exec_opt -l unsafe-host-root -d 'As root: run the payload as the host uid 0'
complete -c isd -n __isd_exec_opt -s t -l tty -d 'A pseudo-terminal inside'
complete -c isd -n __isd_exec_opt -l no-tty -d 'Never a pseudo-terminal'
complete -c isd -n __isd_exec_opt -s i -l interactive -d 'Forward stdin to the terminal'
complete -c isd -n __isd_exec_opt -l print-spec -d 'Print the resolved sandbox as JSON'
complete -c isd -n __isd_exec_opt -l rm -d 'Accepted and ignored'
complete -c isd -n __isd_exec_opt -l read-only -d 'Accepted and ignored'
complete -c isd -n __isd_exec_opt -l init -d 'Accepted and ignored'
complete -c isd -n __isd_exec_opt -l cap-drop -x -a ALL -d 'Accepted and ignored'
complete -c isd -n __isd_exec_opt -l help -d 'Print the option summary'

# isd build
set -l __isd_build '__isd_is build'
complete -c isd -n $__isd_build -s t -l tag -x -a '(__isd_images)' -d 'The image name'
complete -c isd -n $__isd_build -s f -l file -r -F -d 'The Containerfile'
complete -c isd -n $__isd_build -l build-arg -x -a '(set -xn)' -d 'A value for ARG'
complete -c isd -n $__isd_build -l pull -d 'Look the base image up again'
complete -c isd -n $__isd_build -l ca-file -r -F -d 'CA bundle for HTTPS'
complete -c isd -n $__isd_build -l keyring -r -F -d 'OpenPGP keys for fedora-release'
complete -c isd -n $__isd_build -l no-cache -d 'Build even when nothing changed'
complete -c isd -n $__isd_build -s q -l quiet -d 'No progress output'
complete -c isd -n $__isd_build -s h -l help -d 'Print the usage'
complete -c isd -n $__isd_build -a '(__fish_complete_directories)' -d Context

# isd image
set -l __isd_image_sub ls list inspect rm prune help
complete -c isd -n "__isd_is image images; and not __fish_seen_subcommand_from $__isd_image_sub" -a 'ls inspect rm prune help'
complete -c isd -n '__isd_is image images; and __fish_seen_subcommand_from inspect rm' -a '(__isd_images)' -d Image

# isd profile
complete -c isd -n '__isd_is profile; and not __fish_seen_subcommand_from list show edit' -a 'list show edit'
complete -c isd -n '__isd_is profile; and __fish_seen_subcommand_from show edit' -a '(__isd_profiles | string match -v none)' -d Profile

# isd session, diff, apply, discard
complete -c isd -n '__isd_is session; and not __fish_seen_subcommand_from list ls prune help' -a 'list prune help'
complete -c isd -n '__isd_is session; and __fish_seen_subcommand_from prune' -l dry-run -d 'Only name them'
complete -c isd -n '__isd_is session; and __fish_seen_subcommand_from list ls' -l json -d 'JSON output'
complete -c isd -n '__isd_is diff apply discard log' -a '(__isd_sessions)' -d Session
complete -c isd -n '__isd_is log' -l json -d 'The records as JSON Lines'
complete -c isd -n '__isd_is log' -l tree -d 'The commands as a process tree'
complete -c isd -n '__isd_is log' -s f -l follow -d 'The records as they are written, until the sandbox ends'
complete -c isd -n '__isd_is log' -l file -r -F -d 'The log of isd exec --activity-log'
complete -c isd -n '__isd_is diff apply' -F
complete -c isd -n '__isd_is diff' -l stat -d 'Changed lines per file'
complete -c isd -n '__isd_is diff' -l name-only -d 'Only the changed paths'
complete -c isd -n '__isd_is diff' -l ignored -d 'Also what .gitignore ignores'
complete -c isd -n '__isd_is diff' -l color -a 'auto always never' -d 'Colour the patch'
complete -c isd -n '__isd_is apply' -l force -d 'Overwrite files changed on the host'
complete -c isd -n '__isd_is apply' -l include-ignored -d 'Also apply what .gitignore ignores'
complete -c isd -n '__isd_is apply' -l allow-git-exec -d 'Take git configuration that runs commands on the host'
complete -c isd -n '__isd_is apply' -l allow-history-loss -d 'Take changes that remove git objects or rewrite history'
complete -c isd -n '__isd_is discard' -l all -d 'Every stopped session of the project'
complete -c isd -n '__isd_is apply' -l state -d 'Take the held agent state instead'
complete -c isd -n '__isd_is state; and not __fish_seen_subcommand_from list diff apply restore discard' -a 'list diff apply restore discard'
complete -c isd -n '__isd_is state; and __fish_seen_subcommand_from diff apply restore discard' -a '(isd state list 2>/dev/null | tail -n +2 | string split -f1 " ")' -d Store

# isd doctor, seccomp, gc
complete -c isd -n '__isd_is doctor' -l json -d 'JSON output'
complete -c isd -n '__isd_is seccomp; and not __fish_seen_subcommand_from check list help' -a 'check list help'
complete -c isd -n '__isd_is seccomp; and __fish_seen_subcommand_from check' -a '(__isd_seccomp_profiles)' -d Profile
complete -c isd -n '__isd_is seccomp; and __fish_seen_subcommand_from check' -F
complete -c isd -n '__isd_is seccomp; and __fish_seen_subcommand_from check' -l pfc -d 'Pseudo-filter code'
complete -c isd -n '__isd_is seccomp; and __fish_seen_subcommand_from check' -l json -d 'JSON report'
complete -c isd -n '__isd_is seccomp; and __fish_seen_subcommand_from check' -s v -l verbose -d 'Also ignored names'
complete -c isd -n '__isd_is gc' -s n -l dry-run -d 'Only show what would be removed'
