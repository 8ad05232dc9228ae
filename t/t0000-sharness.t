#!/bin/sh
test_description='the test harness itself works'

. $(dirname $0)/sharness.sh

test_expect_success 'true works' '
	true
'
test_expect_success 'canopy is found in the build tree' '
	command -v canopy &&
	canopy --version | grep "^canopy "
'
test_expect_success 'canopy --help lists commands' '
	canopy --help >help.out &&
	grep "^  start" help.out &&
	grep "^  ping" help.out
'
test_expect_success 'an unknown command is refused with a hint' '
	test_must_fail canopy nosuchcommand 2>err &&
	grep "not a canopy command" err
'
test_expect_success 'every command has --help' '
	for cmd in start ping getattr setattr lsattr module event dmesg shutdown overlay; do
		canopy $cmd --help >out.$cmd || return 1
		grep -i "usage" out.$cmd || return 1
	done
'
test_expect_success 'canopy help COMMAND shows its usage' '
	canopy help ping | grep "Usage: canopy ping"
'
test_expect_success 'canopy help takes one command' '
	test_must_fail canopy help ping extra 2>err &&
	grep "help: unexpected argument .extra." err
'
test_done
