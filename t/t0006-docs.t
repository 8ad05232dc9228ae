#!/bin/sh
test_description='man pages render without warnings and match the commands'"'"' --help'

. $(dirname $0)/sharness.sh

mandir=$SHARNESS_TEST_SRCDIR/../doc/man1

if command -v groff >/dev/null 2>&1; then
	test_set_prereq GROFF
fi

# Render a page as plain text, wide enough that no option is broken
# across lines.
render () {
	groff -man -Tascii -P-c -P-b -P-u -rLL=250n "$1" 2>/dev/null
}

# The long options a page documents: the tags of the OPTIONS section, i.e.
# its lines that start with an option (7 spaces of indent, then "-").
page_options () {
	render "$1" | sed -n "/^OPTIONS/,/^[A-Z]/p" | grep "^       -" |
		grep -o -e "--[a-z][a-z-]*" | sort -u
}

test_expect_success 'there is a man page for every command' '
	for p in canopy canopy-start canopy-ping canopy-getattr canopy-module \
	         canopy-event canopy-dmesg canopy-kvs canopy-run; do
		test -f $mandir/$p.1 || return 1
	done
'
test_expect_success GROFF 'every man page renders without warnings' '
	for f in $mandir/*.1; do
		groff -man -Tutf8 -ww -z "$f" 2>warn &&
		test_must_be_empty warn || { echo "$f:"; cat warn; return 1; }
	done
'
test_expect_success GROFF 'every man page has NAME, SYNOPSIS, DESCRIPTION, OPTIONS, SEE ALSO' '
	for f in $mandir/*.1; do
		render "$f" >page &&
		for s in NAME SYNOPSIS DESCRIPTION OPTIONS "SEE ALSO"; do
			grep -q "^$s" page || { echo "$f: no $s"; return 1; }
		done
	done
'
# page -> the commands whose --help must list its options
check_page () {
	page=$1
	shift
	page_options $mandir/$page.1 >opts.$page &&
	test -s opts.$page &&
	for cmd in "$@"; do
		canopy $cmd --help || return 1
	done >help.$page &&
	while read -r opt; do
		grep -q -e "$opt" help.$page || { echo "$page.1: $opt not in --help"; return 1; }
	done <opts.$page
}
test_expect_success GROFF 'canopy --help lists the options of canopy(1)' '
	page_options $mandir/canopy.1 >opts.canopy &&
	test -s opts.canopy &&
	canopy --help >help.canopy &&
	while read -r opt; do
		grep -q -e "$opt" help.canopy || { echo "canopy.1: $opt"; return 1; }
	done <opts.canopy
'
test_expect_success GROFF 'each command'"'"'s --help lists the options of its page' '
	check_page canopy-start start &&
	check_page canopy-ping ping &&
	check_page canopy-getattr getattr setattr lsattr &&
	check_page canopy-module module &&
	check_page canopy-event event &&
	check_page canopy-dmesg dmesg &&
	check_page canopy-kvs kvs &&
	check_page canopy-run run
'
test_expect_success GROFF 'each command'"'"'s --help options are in its page' '
	for pair in start:canopy-start ping:canopy-ping getattr:canopy-getattr \
	            setattr:canopy-getattr lsattr:canopy-getattr \
	            module:canopy-module event:canopy-event dmesg:canopy-dmesg \
	            kvs:canopy-kvs run:canopy-run; do
		cmd=${pair%%:*} page=${pair#*:}
		canopy $cmd --help | grep -o -e "--[a-z][a-z-]*" | sort -u >hopts.$cmd &&
		page_options $mandir/$page.1 >popts.$cmd &&
		while read -r opt; do
			grep -q -x -e "$opt" popts.$cmd ||
				{ echo "$page.1 does not document $cmd $opt"; return 1; }
		done <hopts.$cmd || return 1
	done
'
test_done
