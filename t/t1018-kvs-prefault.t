#!/bin/sh
test_description='memory touched ahead after a large kvs.prime (broker.heap-keep)

After a collective fence whose kvs.prime event carries 64 KiB or more,
every broker touches free memory ahead of the next fence (heap_prefault),
which it keeps for all its threads (broker.heap-keep).  kvs.stats counts
it as prefaults.  With broker.heap-keep=0 nothing is touched ahead.  A
sanitizer'"'"'s allocator takes no such settings (the attribute is 0
there), so the positive case needs a plain build.'

. $(dirname $0)/sharness.sh

KAPCROWD=$SHARNESS_BUILD_DIRECTORY/kap/kap-crowd

# run a fence of 128 participants with 1 KiB values (a 128 KiB kvs.prime),
# then wait until every broker counted a prefault (or 10 s passed) and
# print each broker's count
cat >prefault.sh <<-EOF
#!/bin/sh
$KAPCROWD -N 128 -p 1024 -c 16 -n 1 >crowd.out || exit 1
test "\$1" = once && sleep 0.5     # well past the 30 ms a prefault waits
size=\$(canopy getattr size)
i=0
while test \$i -lt 100; do
	n=0
	r=0
	while test \$r -lt \$size; do
		c=\$(canopy kvs --rank \$r stats | jq ".counters.prefaults")
		test "\$c" -gt 0 && n=\$((n + 1))
		r=\$((r + 1))
	done
	test \$n = \$size && break
	test "\$1" = once && break
	sleep 0.1
	i=\$((i + 1))
done
r=0
while test \$r -lt \$size; do
	canopy kvs --rank \$r stats | jq ".counters.prefaults"
	r=\$((r + 1))
done
EOF
chmod +x prefault.sh

test_expect_success NO_SANITIZER 'after a 128 KiB kvs.prime every broker touches memory ahead' '
	canopy start -n 4 -k 2 -- ./prefault.sh >counts &&
	cat counts &&
	test $(wc -l <counts) = 4 &&
	! grep -x 0 counts
'
test_expect_success 'with broker.heap-keep=0 nothing is touched ahead' '
	canopy start -n 4 -k 2 -S broker.heap-keep=0 -- ./prefault.sh once >counts0 &&
	cat counts0 &&
	test $(wc -l <counts0) = 4 &&
	test $(grep -cx 0 counts0) = 4
'
test_done
