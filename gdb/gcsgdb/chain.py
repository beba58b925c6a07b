# SPDX-License-Identifier: MIT
"""A GCS chain as text, frame for frame as `gcsprof inspect` prints a
core's: frames numbered from #0, a run of the same return address
(recursion) in one line with the frame numbers it spans, signal caps and
GCS switches as lines of their own, and with a limit, the frames past it
counted, not shown."""
from . import library as L
from .symbols import describe

# Frames that are code addresses and get a number.
CODE = (L.FRAME_PC, L.FRAME_RETURN, L.FRAME_SIGRETURN, L.FRAME_LR, L.FRAME_INTERRUPTED_PC)
# Whose address is a return address (looked up at address - 4).
RETURNS = (L.FRAME_RETURN, L.FRAME_SIGRETURN, L.FRAME_LR)

_NOTES = {
    L.FRAME_SIGRETURN: "the signal handler returns here (signal trampoline)",
    L.FRAME_INTERRUPTED_PC: "interrupted here by the signal",
    L.FRAME_LR: "the link register: the caller of a function that pushed nothing (riscv64's "
                "leaves), not on the shadow stack",
}


def code_frames(frames):
    """The numbered frames: (number, kind, address, slot)."""
    out = []
    for kind, address, slot in frames:
        if kind in CODE:
            out.append((len(out), kind, address, slot))
    return out


def lines(frames, symbolizer, limit=0, full=False, hint="gcs bt N"):
    """The text of FRAMES, each line without its newline."""
    out = []
    total = len(code_frames(frames))
    k = i = 0
    n = len(frames)
    while i < n and (not limit or k < limit):
        kind, address, slot = frames[i]
        if kind in CODE:
            run = 1
            while i + run < n and frames[i + run][0] == kind and frames[i + run][1] == address:
                run += 1
            if limit and k + run > limit:
                run = limit - k
            loc = symbolizer.locate(address, kind in RETURNS)
            text = describe(loc)
            text[0] = "  #%-3d %s" % (k, text[0])
            text[1:] = ["       " + t for t in text[1:]]
            out.extend(text)
            if kind in _NOTES:
                out.append("        [%s]" % _NOTES[kind])
            if full:
                where = "GCS slot 0x%016x" % slot if slot else "registers"
                out.append("        [%s, %s%s]" % (where, L_KIND.get(kind, "?"),
                                                 ", " + loc.module if loc.module else ""))
            if run > 1:
                out.append("        [the same frame %d more times: #%d to #%d, recursion]"
                           % (run - 1, k + 1, k + run - 1))
            k += run
            i += run
            continue
        if kind == L.FRAME_SIGNAL_CAP:
            out.append("  ---- signal delivered here; the interrupted context follows ----")
        elif kind == L.FRAME_SWITCH_CAP:
            out.append("  ---- GCS switch: this stack was left here (switch cap token "
                       "0x%016x at 0x%016x); the frames below ran on it ----" % (address, slot))
        elif kind == L.FRAME_TERMINATOR:
            if full:
                out.append("  [end of the GCS: the terminating 0 at 0x%016x]" % slot)
        elif kind == L.FRAME_UNREADABLE:
            out.append("  [the GCS slot at 0x%016x cannot be read: the chain ends here]" % slot)
        else:
            out.append("  [%s entry 0x%016x at 0x%016x]" % (L_KIND.get(kind, "?"), address, slot))
        i += 1
    if k < total:
        out.append("  ... %d more frame%s not shown (%s): #%d to #%d"
                   % (total - k, "" if total - k == 1 else "s", hint, k, total - 1))
    return out


L_KIND = {
    L.FRAME_PC: "pc", L.FRAME_LR: "lr", L.FRAME_RETURN: "return",
    L.FRAME_SIGRETURN: "sigreturn", L.FRAME_SIGNAL_CAP: "signal-cap",
    L.FRAME_SWITCH_CAP: "switch-cap", L.FRAME_TERMINATOR: "terminator",
    L.FRAME_UNREADABLE: "unreadable", L.FRAME_INVALID: "invalid",
    L.FRAME_INTERRUPTED_PC: "interrupted-pc",
}
