#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# PID 1 inside user-mode Linux (booted by boot.sh on the host's own root
# over hostfs).  Builds what a systemd host gives a logged-in user:
#   /sys/fs/cgroup (cgroup2, nsdelegate) with all controllers enabled,
#   user.slice/user-$UID.slice/user@$UID.service delegated to the user with
#   cpu memory pids (systemd's default Delegate= for user@.service; io and
#   cpuset deliberately not delegated), app.slice inside it made by "the
#   user manager", and a leaf app.slice/tests.scope holding the runner,
# then runs the guest script as that user and powers off.
# ISD_UML_MODE=systemd-user instead starts a real `systemd --user` in
# user@$UID.service and runs the guest in a root-owned session-1.scope, as
# logind does for an ssh login (nothing writable: isd must ask systemd).
# The boot line passes ISD_UML_OUT, ISD_UML_GUEST, ISD_UML_UID, ISD_UML_MODE,
# ISD_UML_TIMEOUT and ISD_UML_ENV (a file of VAR=value lines) as environment.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
out=${ISD_UML_OUT:?}
uid=${ISD_UML_UID:-1000}
guest_timeout=${ISD_UML_TIMEOUT:-200}

say() { echo "uml-init: $*"; }
finish() {
	sync
	poweroff -f
	sleep 5
}
trap finish EXIT

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=755 tmpfs /run
# The guest's own /dev, always: hostfs's /dev is the host's, where the
# guest's root (the host's root, through hostfs) changed the host's nodes
# (a chown of /dev/null to the test user was seen).
# (Debian's user-mode Linux has no devtmpfs: a tmpfs with the usual nodes.)
mount -t tmpfs -o mode=755 tmpfs /dev || { say "cannot mount the guest's /dev"; exit 1; }
for n in "null 1 3" "zero 1 5" "full 1 7" "random 1 8" "urandom 1 9" "tty 5 0"; do
	# shellcheck disable=SC2086
	set -- $n
	mknod -m 666 "/dev/$1" c "$2" "$3" || { say "cannot make /dev/$1"; exit 1; }
done
mkdir -p /dev/pts /dev/shm
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts /dev/pts && ln -s pts/ptmx /dev/ptmx
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
ln -s /proc/self/fd /dev/fd
ln -s /proc/self/fd/0 /dev/stdin
ln -s /proc/self/fd/1 /dev/stdout
ln -s /proc/self/fd/2 /dev/stderr
mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup || { say "no cgroup2"; exit 1; }
mkdir -p /tmp/guest
chmod 0777 /tmp/guest

cg=/sys/fs/cgroup
all=$(cat $cg/cgroup.controllers)
say "kernel $(uname -r), controllers: $all"
plus() { for c in "$@"; do printf '+%s ' "$c"; done; }
slice=$cg/user.slice
user=$slice/user-$uid.slice
svc=$user/user@$uid.service
delegated=
for c in cpu memory pids; do
	case " $all " in *" $c "*) delegated="$delegated $c" ;; esac
done
# shellcheck disable=SC2086
{
	echo "$(plus $all)" >$cg/cgroup.subtree_control &&
		mkdir -p "$svc" &&
		echo "$(plus $all)" >"$slice/cgroup.subtree_control" &&
		echo "$(plus $delegated)" >"$user/cgroup.subtree_control" &&
		# systemd's delegation: the directory and these three files
		chown "$uid:$uid" "$svc" "$svc/cgroup.procs" "$svc/cgroup.subtree_control" "$svc/cgroup.threads"
} || { say "delegation setup failed"; exit 1; }
say "delegated $svc to uid $uid:$delegated"
extra_env=
if [ "${ISD_UML_MODE:-delegated}" = systemd-user ]; then
	run=/run/user/$uid
	# /run/systemd/system is how sd_booted() recognises a systemd host
	mkdir -p "$run" /run/systemd/system && chown "$uid:$uid" "$run" && chmod 700 "$run"
	sh -c 'echo $$ >"$1/cgroup.procs" && exec setpriv --reuid="$2" --regid="$2" --clear-groups \
		env -i PATH=/usr/bin:/bin HOME=/tmp XDG_RUNTIME_DIR="$3" /lib/systemd/systemd --user' \
		sh "$svc" "$uid" "$run" >/tmp/guest/systemd-user.log 2>&1 &
	i=0
	while [ ! -S "$run/systemd/private" ] && [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	[ -S "$run/systemd/private" ] || { say "systemd --user did not start"; exit 1; }
	# A root-owned leaf the user cannot write, nor its parent.  Not
	# session-N.scope next to user@.service as after an ssh login: from
	# there only the system manager may move a process into the user's
	# scope (systemd --user asks it over the system bus), and there is no
	# system manager in here.
	i=0
	while [ ! -d "$svc/app.slice" ] && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	leaf=$svc/app.slice/locked.slice/session.scope
	mkdir -p "$leaf" || { say "no app.slice from systemd --user"; exit 1; }
	extra_env="XDG_RUNTIME_DIR=$run"
	say "systemd --user runs; guest in root-owned $leaf"
else
	# what the user manager makes inside its subtree (owned by the user)
	leaf=$svc/app.slice/tests.scope
	mkdir -p "$leaf" && chown -R "$uid:$uid" "$svc/app.slice" &&
		echo "$(plus $delegated)" >"$svc/cgroup.subtree_control" &&
		echo "$(plus $delegated)" >"$svc/app.slice/cgroup.subtree_control" ||
		{ say "user tree setup failed"; exit 1; }
fi

env_file=${ISD_UML_ENV:-/dev/null}
# Root moves the runner into its leaf (as systemd does for the user
# manager), then becomes the user with a clean environment.
timeout -k 5 "$guest_timeout" sh -c '
	echo $$ >"$1/cgroup.procs" || exit 99
	exec setpriv --reuid="$2" --regid="$2" --clear-groups \
		env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/tmp TMPDIR=/tmp USER=test LANG=C.UTF-8 \
		ISD_UML_RESULTS=/tmp/guest $5 $(cat "$3") sh "$4"
' sh "$leaf" "$uid" "$env_file" "${ISD_UML_GUEST:?}" "$extra_env" >/tmp/guest/guest.log 2>&1
rc=$?
say "guest exited with $rc"
cp -r /tmp/guest/. "$out/" 2>/dev/null
echo "$rc" >"$out/guest-rc"
