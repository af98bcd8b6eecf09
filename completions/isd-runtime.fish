# SPDX-License-Identifier: LGPL-2.1-or-later
# fish completion for isd-runtime(8).  Installed as
# PREFIX/share/fish/vendor_completions.d/isd-runtime.fish.

set -l __isd_runtime_cmds create start run state kill delete list ps exec pause resume update features spec
complete -c isd-runtime -f
complete -c isd-runtime -n "not __fish_seen_subcommand_from $__isd_runtime_cmds" -a "$__isd_runtime_cmds"
complete -c isd-runtime -n "not __fish_seen_subcommand_from $__isd_runtime_cmds" -l root -r -F -d 'state directory'
complete -c isd-runtime -n "not __fish_seen_subcommand_from $__isd_runtime_cmds" -l log -r -F -d 'log file'
complete -c isd-runtime -n "not __fish_seen_subcommand_from $__isd_runtime_cmds" -l log-format -x -a 'text json'
complete -c isd-runtime -n "not __fish_seen_subcommand_from $__isd_runtime_cmds" -l systemd-cgroup
complete -c isd-runtime -n "not __fish_seen_subcommand_from $__isd_runtime_cmds" -l debug
complete -c isd-runtime -n "__fish_seen_subcommand_from create run spec" -s b -l bundle -r -F -d 'bundle directory'
complete -c isd-runtime -n "__fish_seen_subcommand_from create run exec" -l pid-file -r -F
complete -c isd-runtime -n "__fish_seen_subcommand_from create run exec" -l console-socket -r -F
complete -c isd-runtime -n "__fish_seen_subcommand_from run exec" -s d -l detach
complete -c isd-runtime -n "__fish_seen_subcommand_from kill" -s a -l all
complete -c isd-runtime -n "__fish_seen_subcommand_from delete" -s f -l force
complete -c isd-runtime -n "__fish_seen_subcommand_from list ps" -s f -l format -x -a 'table json'
complete -c isd-runtime -n "__fish_seen_subcommand_from list" -s q -l quiet
complete -c isd-runtime -n "__fish_seen_subcommand_from exec" -s p -l process -r -F
complete -c isd-runtime -n "__fish_seen_subcommand_from exec" -s t -l tty
complete -c isd-runtime -n "__fish_seen_subcommand_from exec" -l cwd -r
complete -c isd-runtime -n "__fish_seen_subcommand_from exec" -s e -l env -r
complete -c isd-runtime -n "__fish_seen_subcommand_from exec" -s u -l user -r
complete -c isd-runtime -n "__fish_seen_subcommand_from spec" -l rootless
complete -c isd-runtime -n "__fish_seen_subcommand_from update" -s r -l resources -r -F -d 'LinuxResources JSON, - for stdin'
complete -c isd-runtime -n "__fish_seen_subcommand_from update" -l memory -l memory-swap -l memory-reservation -x
complete -c isd-runtime -n "__fish_seen_subcommand_from update" -l cpu-quota -l cpu-period -l cpu-share -l cpuset-cpus -x
complete -c isd-runtime -n "__fish_seen_subcommand_from update" -l pids-limit -l blkio-weight -x
complete -c isd-runtime -n "__fish_seen_subcommand_from start state kill delete ps exec pause resume update" -a '(isd-runtime list -q 2>/dev/null)'
