# A version-1 profile as version 2 (docs/profile-format.md), written apart
# from gcsprof's own writer so that the test that uses it checks the format,
# not one implementation against itself: each sample's chain, outermost
# frame first, becomes the stack nodes it lacks, and the sample names its
# innermost node, with no CPU or weight; the end record gains the number
# of nodes.
NR == 1 { print "gcsprof-profile 2"; next }
$1 == "sample" {
	parent = 0
	for (i = NF; i >= 9; i--) {
		key = parent " " $i
		if (!(key in node)) {
			node[key] = ++n
			print "stack " parent " " $i
		}
		parent = node[key]
	}
	print "sample " $2 " " $3 " " $4 " " $5 " " $6 " " $7 " " $8 " - - " parent
	next
}
$1 == "end" { print $0 " " n + 0; next }
{ print }
