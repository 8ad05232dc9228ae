#!/bin/sh
test_description='make install: the systemd unit, the example configuration and
the manual pages of the cluster daemon'

. $(dirname $0)/sharness.sh

test_expect_success 'make install into a staging directory' '
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		make -C "$SHARNESS_BUILD_DIRECTORY/etc" install DESTDIR="$PWD/dest" >make.out 2>&1 &&
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		make -C "$SHARNESS_BUILD_DIRECTORY/doc" install DESTDIR="$PWD/dest" >>make.out 2>&1 &&
	find dest -type f | sort >files &&
	cat files ||
	{ cat make.out; false; }
'
test_expect_success 'the unit runs the broker with the system configuration' '
	unit=$(grep "/systemd/system/canopy.service$" files) &&
	grep "^ExecStart=/.*/canopy/canopy-broker --config=/.*/canopy/system.toml$" $unit &&
	grep "^Restart=on-failure$" $unit &&
	grep "^StandardError=journal$" $unit &&
	grep "^RuntimeDirectory=canopy$" $unit &&
	! grep "@" $unit
'
test_expect_success 'the example configuration is valid' '
	conf=$(grep "/canopy/system.toml.example$" files) &&
	sed "s|/etc/canopy/curve.cert|$PWD/c.cert|" $conf >example.toml &&
	test_must_fail canopy_broker --config=example.toml --rank=1 --rundir="$PWD/run" \
		2>err &&
	cat err &&
	grep "c.cert: No such file" err &&
	test ! -e run
'
test_expect_success 'the manual pages are installed and well formed' '
	for page in man1/canopy-overlay.1 man1/canopy-keygen.1 man1/canopy-shutdown.1 \
		    man8/canopy-broker.8; do
		f=$(grep "/$page$" files) || return 1
		if command -v groff >/dev/null; then
			groff -man -ww -z $f 2>warn && test ! -s warn || return 1
		fi
	done
'
test_done
