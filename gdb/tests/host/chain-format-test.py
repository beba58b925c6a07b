# SPDX-License-Identifier: MIT
# The chain formatter on hand-made GCS walks, in GDB's Python (gdb -batch
# -x this file, after sourcing the plugin): recursion folded with the frame
# numbers it spans, the N limit counted, caps and odd entries on lines of
# their own. TAP on stdout.
import gdb

from gcsgdb import chain
from gcsgdb import library as L
from gcsgdb.symbols import Level, Location

results = []


class Names:
    """A symboliser naming 0x1000 + 16 * i "fn<i>"."""

    def locate(self, address, is_return):
        return Location(address, [Level("fn%d" % ((address - 0x1000) // 16), 4, "f.c", 7)], None)


def check(desc, cond):
    results.append(cond)
    print("%s %d - %s" % ("ok" if cond else "not ok", len(results), desc))


def show(lines):
    for line in lines:
        print("# " + line)


frames = [(L.FRAME_PC, 0x1000, 0)] + [(L.FRAME_RETURN, 0x1010, 0x8000 + 8 * i)
                                      for i in range(50)]
frames += [(L.FRAME_RETURN, 0x1020, 0x9000), (L.FRAME_TERMINATOR, 0, 0x9008)]
out = chain.lines(frames, Names())
show(out)
check("52 frames in 3 frame lines and one fold", len(out) == 4)
check("#0 is the PC", out[0].startswith("  #0   0x0000000000001000 fn0+0x4 at f.c:7"))
check("the fold spans #2 to #50",
      out[2] == "        [the same frame 49 more times: #2 to #50, recursion]")
check("then #51", out[3].startswith("  #51  0x0000000000001020 fn2"))

out = chain.lines(frames, Names(), limit=10, hint="gcs bt 10")
show(out)
check("a limit inside the fold cuts it", "[the same frame 8 more times: #2 to #9, recursion]" in out[2])
check("and counts the rest", out[-1] == "  ... 42 more frames not shown (gcs bt 10): #10 to #51")

frames = [(L.FRAME_PC, 0x1000, 0), (L.FRAME_RETURN, 0x1010, 0x8000),
          (L.FRAME_SIGRETURN, 0x1020, 0x8008), (L.FRAME_SIGNAL_CAP, 0x9000, 0x8010),
          (L.FRAME_INTERRUPTED_PC, 0x1030, 0x7000), (L.FRAME_RETURN, 0x1040, 0x8018),
          (L.FRAME_SWITCH_CAP, 0xa001, 0x8020), (L.FRAME_RETURN, 0x1050, 0xa000),
          (L.FRAME_INVALID, 0x1234, 0xa008), (L.FRAME_UNREADABLE, 0, 0xa010)]
out = chain.lines(frames, Names(), full=True)
show(out)
text = "\n".join(out)
check("the trampoline labelled", "[the signal handler returns here (signal trampoline)]" in text)
check("the signal delivery on a line of its own",
      "  ---- signal delivered here; the interrupted context follows ----" in out)
check("the interrupted PC labelled and numbered #3",
      any(l.startswith("  #3   0x0000000000001030 fn3") for l in out)
      and "[interrupted here by the signal]" in text)
check("the GCS switch shown", "---- GCS switch: this stack was left here" in text)
check("an invalid entry shown raw", "  [invalid entry 0x0000000000001234 at 0x000000000000a008]" in out)
check("an unreadable slot ends it",
      out[-1] == "  [the GCS slot at 0x000000000000a010 cannot be read: the chain ends here]")
check("-full gives slots and kinds", "        [GCS slot 0x0000000000008000, return]" in out)
check("the frames numbered #0 to #5", [l.split()[0] for l in out if l.startswith("  #")]
      == ["#0", "#1", "#2", "#3", "#4", "#5"])
print("1..%d" % len(results))
gdb.execute("quit %d" % (0 if all(results) else 1))
