#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The README promises that tests whose tools are missing skip and say which
# package to install: every skip for a missing tool reads "TOOL (PACKAGE) is
# not installed" or goes on to say how to install it (after a colon: the
# real agents come from npm).  (.ci/fresh-machine.sh
# checks the skips a fresh machine really takes; this checks them all.)
src=${1:?usage: skip-messages.sh SOURCE_ROOT}
bad=$(grep -n 'skip "' "$src"/tests/integration/*.sh "$src"/tests/build/lib.sh |
	grep -i 'not installed' | grep -v '(.*) is not installed' | grep -v -i 'not installed.*install' | grep -v 'not installed[^"]*:')
if [ -n "$bad" ]; then
	echo "skips that do not name the package to install (write \"TOOL (PACKAGE) is not installed\"):"
	printf '%s\n' "$bad"
	exit 1
fi
