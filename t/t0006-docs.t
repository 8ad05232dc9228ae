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
	         canopy-event canopy-dmesg canopy-content canopy-dump canopy-fsck \
	         canopy-kvs canopy-run; do
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
	check_page canopy-content content &&
	check_page canopy-dump dump restore &&
	check_page canopy-fsck fsck &&
	check_page canopy-kvs kvs &&
	check_page canopy-run run
'
test_expect_success GROFF 'each command'"'"'s --help options are in its page' '
	for pair in start:canopy-start ping:canopy-ping getattr:canopy-getattr \
	            setattr:canopy-getattr lsattr:canopy-getattr \
	            module:canopy-module event:canopy-event dmesg:canopy-dmesg \
	            content:canopy-content dump:canopy-dump restore:canopy-dump \
	            fsck:canopy-fsck kvs:canopy-kvs run:canopy-run; do
		cmd=${pair%%:*} page=${pair#*:}
		canopy $cmd --help | grep -o -e "--[a-z][a-z-]*" | sort -u >hopts.$cmd &&
		page_options $mandir/$page.1 >popts.$cmd &&
		while read -r opt; do
			grep -q -x -e "$opt" popts.$cmd ||
				{ echo "$page.1 does not document $cmd $opt"; return 1; }
		done <hopts.$cmd || return 1
	done
'
# Programs outside src/cmd: the KAP drivers live in the build tree's kap/
# and kap/model/ (installed under the package data directory).
KAPCROWD=$SHARNESS_BUILD_DIRECTORY/kap/kap-crowd
KAPMODEL=$SHARNESS_BUILD_DIRECTORY/kap/model/kap-model
KAP=$SHARNESS_BUILD_DIRECTORY/kap/kap

# check_program PAGE PROGRAM: every long option PAGE.1 documents is in
# PROGRAM --help, and every long option PROGRAM --help prints is in PAGE.1.
check_program () {
	page=$1
	prog=$2
	page_options $mandir/$page.1 >opts.$page &&
	test -s opts.$page &&
	"$prog" --help >help.$page &&
	while read -r opt; do
		grep -q -e "$opt" help.$page ||
			{ echo "$page.1: $opt not in $page --help"; return 1; }
	done <opts.$page &&
	grep -o -e "--[a-z][a-z-]*" help.$page | sort -u >hopts.$page &&
	test -s hopts.$page &&
	while read -r opt; do
		grep -q -x -e "$opt" opts.$page ||
			{ echo "$page.1 does not document $page $opt"; return 1; }
	done <hopts.$page
}
test_expect_success 'kap-crowd and kap-model are built, and have man pages' '
	test -x "$KAPCROWD" && test -x "$KAPMODEL" &&
	test -f $mandir/kap-crowd.1 && test -f $mandir/kap-model.1
'
test_expect_success GROFF 'kap-crowd(1) documents the options of kap-crowd --help' '
	check_program kap-crowd "$KAPCROWD"
'
test_expect_success GROFF 'kap-model(1) documents the options of kap-model --help' '
	check_program kap-model "$KAPMODEL"
'
test -x "$KAP" && test_set_prereq KAP
test_expect_success 'kap has a man page' '
	test -f $mandir/kap.1
'
# kap calls MPI_Init before it parses its options, and MPI libraries keep
# memory until exit by design: no leak reports from a sanitizer build
# (as in t3000).
test_expect_success GROFF,KAP 'kap(1) documents the options of kap --help' '
	(
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" &&
		export ASAN_OPTIONS &&
		check_program kap "$KAP"
	)
'
test_expect_success GROFF 'the KAP pages have EXAMPLES and EXIT STATUS' '
	for p in kap kap-crowd kap-model; do
		render $mandir/$p.1 >page.$p &&
		for s in EXAMPLES "EXIT STATUS"; do
			grep -q "^$s" page.$p || { echo "$p.1: no $s"; return 1; }
		done
	done
'
test_expect_success GROFF 'canopy-event(1) documents pub --count' '
	canopy event --help | grep -e "--count" | grep -q "pub" &&
	render $mandir/canopy-event.1 | sed -n "/^OPTIONS/,/^[A-Z]/p" >event.opts &&
	grep -A3 -e "--count" event.opts | grep -q "(pub)"
'
# The source tour (doc/internals.md) names every source file: "keep it
# true when you move things".  A foo.h is covered by its foo.c; headers
# without a .c of their own must be named themselves.  Unit tests (test/
# directories) are not required.
srcdir=$SHARNESS_TEST_SRCDIR/..
internals=$srcdir/doc/internals.md

test_expect_success 'doc/internals.md names every source file' '
	test -f "$internals" &&
	(cd "$srcdir" && find src kap fuzz bench t/helpers \
		-path "*/test" -prune -o \( -name "*.c" -o -name "*.h" \) -print) >srcfiles &&
	test -s srcfiles &&
	while read -r f; do
		case $f in
		*.h) test -f "$srcdir/${f%.h}.c" && continue ;;
		esac
		b=${f##*/}
		grep -q -F -e "$b" -e "${b%.*}.[ch]" "$internals" ||
			{ echo "doc/internals.md does not name $f"; return 1; }
	done <srcfiles
'
test_expect_success 'nothing refers to the old doc/internals-*.md notes' '
	(cd "$srcdir" && grep -rl -e "doc/internals-[a-z]*\.md" \
		src kap fuzz bench t/helpers doc README.md 2>/dev/null) >stale || :
	test_must_be_empty stale
'
test_expect_success GROFF 'canopy-broker(8) documents every kvs.NAME option' '
	sed -n "s/^ *X (\"\([a-z-]*\)\", K_.*/\1/p" "$srcdir/src/modules/kvs/options.c" >kvsopts &&
	test $(wc -l <kvsopts) -ge 10 &&
	render "$srcdir/doc/man8/canopy-broker.8" >broker8 &&
	while read -r o; do
		grep -q -F "kvs.$o" broker8 ||
			{ echo "canopy-broker(8) does not document kvs.$o"; return 1; }
	done <kvsopts
'
test_done
