# Judges one post-mortem tool's output on one core of a known shape
# (bench/guest/postmortem.sh in the guest, bench/postmortem-host on the
# host; POSIX awk: mawk, busybox awk, gawk).
#
#   awk -v fmt=FORMAT -v spec=SPEC -f judge.awk OUTPUT
#
# FORMAT: gcs (gcsprof inspect and the GDB plugin's `gcs bt`: "thread ..."
# headers, "  #N 0xADDR NAME+OFF" frames, inline levels on lines of their
# own, "[the same frame K more times ...]" for a recursion), gdb (`thread
# apply all bt`: "Thread N ..." headers, "#N  0xADDR in NAME (...)"), eu
# (eu-stack: "TID N:" headers, "#N  0xADDR NAME").
#
# SPEC: the core's true chains, "COUNT:CHAIN,COUNT:CHAIN,...", CHAIN the
# program's own functions from the thread's entry (outermost) to the
# fatal or blocked frame, space-separated, NAME*K for K consecutive
# frames of NAME (a recursion): "1:main recurse*2001,3:worker wait".
#
# Every name in SPEC is one of the program's functions; the others (libc's
# abort, pthread_cond_wait, start_thread, ...) are outside the judged span.
# A thread's chain is correct when the frames it shows, from the first to
# the last frame named in SPEC, are all named in SPEC (nothing stray in
# between, such as a forged 0x4141414141414141) and, runs counted, equal one
# of SPEC's chains; each chain of SPEC is matched by at most COUNT threads.
#
# Prints one line: "FRAMES CORRECT TOTAL NOTE", FRAMES every frame shown
# (a folded recursion counts its frames), TOTAL the threads in SPEC.

function norm(name) {
	sub(/\+0x[0-9a-f]+$/, "", name)
	sub(/@plt$/, "", name)
	# GCC's clones (recurse.constprop.0) are the function.
	if (name !~ /^\./)
		sub(/\..*$/, "", name)
	return name
}

function new_thread(id) {
	nt++
	tid[nt] = id
	nf[nt] = 0
}

# A frame of the current thread, innermost first; COUNT frames of NAME.
# None before the first thread's header (GDB prints the frame it stops at
# when it loads the core).
function frame(name, count) {
	if (nt == 0)
		return
	frames += count
	nf[nt]++
	fname[nt, nf[nt]] = name
	fcount[nt, nf[nt]] = count
}

# The address-or-name a frame is shown as, for notes.
function shown(name, addr) {
	return name == "??" || name == "" ? addr : name
}

BEGIN {
	total = 0
	nspec = split(spec, parts, ",")
	for (i = 1; i <= nspec; i++) {
		c = index(parts[i], ":")
		want[i] = substr(parts[i], 1, c - 1) + 0
		chain[i] = substr(parts[i], c + 1)
		total += want[i]
		k = split(chain[i], w, " ")
		for (j = 1; j <= k; j++) {
			n = w[j]
			sub(/\*.*$/, "", n)
			known[n] = 1
		}
	}
	nt = 0
	frames = 0
}

fmt == "gcs" && /^thread [0-9]+/ {
	if ($3 == "(LWP") { id = $4; sub(/\).*/, "", id) } else { id = $2; sub(/[^0-9].*/, "", id) }
	new_thread(id)
	next
}
fmt == "gcs" && /^  #[0-9]+ +0x[0-9a-f]+ / {
	frame(norm($3) "|" $2, 1)
	next
}
fmt == "gcs" && /^ +\[the same frame [0-9]+ more times/ && nt > 0 && nf[nt] > 0 {
	fcount[nt, nf[nt]] += $4
	frames += $4
	next
}
# An inline level: the frame line names the innermost function at the
# address, the lines under it the levels around it, outwards.
fmt == "gcs" && /^                   +[^ [(]/ && nt > 0 && nf[nt] > 0 {
	frame(norm($1) "|inline", 1)
	next
}

fmt == "gcs" && /^  STACK CORRUPTION/ {
	corruption++
	next
}

fmt == "gdb" && /^Thread [0-9]+ / {
	id = $0
	if (id ~ /LWP [0-9]+/) { sub(/.*LWP /, "", id); sub(/[^0-9].*/, "", id) } else id = $2
	new_thread(id)
	next
}
fmt == "gdb" && /^#[0-9]+ +/ {
	# GDB marks a return address it stripped of its pointer
	# authentication code.
	sub(/ \[PAC\]/, "")
	if ($2 ~ /^0x[0-9a-f]+$/ && $3 == "in") { addr = $2; name = $4 } else { addr = "?"; name = $2 }
	frame(norm(name) "|" addr, 1)
	next
}
fmt == "gdb" && /^Backtrace stopped: / && gdbstop == "" {
	gdbstop = $0
	sub(/^Backtrace stopped: /, "", gdbstop)
	next
}

fmt == "eu" && /^TID [0-9]+:/ {
	id = $2
	sub(/:$/, "", id)
	new_thread(id)
	next
}
fmt == "eu" && /^#[0-9]+ +0x[0-9a-f]+/ {
	# A user address with bits above 48 set: a return address signed by
	# pointer authentication, its code not stripped.
	if (length($2) == 18 && substr($2, 3, 4) != "0000" &&
	    (substr($2, 7, 4) == "aaaa" || substr($2, 7, 4) == "ffff"))
		pac++
	name = NF >= 3 ? $3 : "??"
	frame(norm(name) "|" $2, 1)
	next
}

END {
	correct = 0
	note = ""
	wrong = 0
	for (t = 1; t <= nt; t++) {
		# The judged span: the outermost to the innermost known frame.
		lo = 0
		hi = 0
		for (f = 1; f <= nf[t]; f++) {
			split(fname[t, f], nm, "|")
			if (nm[1] in known) {
				if (!lo)
					lo = f
				hi = f
			}
		}
		ok = lo > 0
		why = "no frame of the program"
		p = ""
		prev = ""
		run = 0
		for (f = hi; ok && f >= lo; f--) {
			split(fname[t, f], nm, "|")
			if (!(nm[1] in known)) {
				ok = 0
				why = "stray frame " shown(nm[1], nm[2]) " inside the chain"
				break
			}
			if (nm[1] == prev) {
				run += fcount[t, f]
				continue
			}
			if (prev != "")
				p = p (p == "" ? "" : " ") prev (run > 1 ? "*" run : "")
			prev = nm[1]
			run = fcount[t, f]
		}
		if (ok) {
			p = p (p == "" ? "" : " ") prev (run > 1 ? "*" run : "")
			ok = 0
			for (i = 1; i <= nspec; i++)
				if (p == chain[i] && want[i] > 0) {
					want[i]--
					ok = 1
					break
				}
			if (!ok) {
				split(fname[t, nf[t]], nm, "|")
				why = "shows " p ", ends at " shown(nm[1], nm[2])
			}
		}
		if (ok)
			correct++
		else if (!wrong++)
			first = "thread " tid[t] " " why
	}
	if (correct > total)
		correct = total
	if (nt != total)
		note = "shows " nt " of " total " threads"
	if (pac)
		note = note (note == "" ? "" : "; ") pac " return addresses keep their PAC bits"
	if (wrong)
		note = note (note == "" ? "" : "; ") wrong " wrong, e.g. " first
	if (corruption)
		note = note (note == "" ? "" : "; ") "reports STACK CORRUPTION"
	if (gdbstop != "" && correct < total)
		note = note "; gdb: " gdbstop
	gsub(/\|/, "/", note)
	if (length(note) > 160)
		note = substr(note, 1, 157) "..."
	print frames, correct, total, (note == "" ? "-" : note)
}
