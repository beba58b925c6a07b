# SPDX-License-Identifier: MIT
"""GDB's own unwind of the selected thread against its GCS, frame by frame.

GDB's frames (inline frames left out: they share their function's PC) and
the GCS's numbered frames must carry the same addresses in the same order.
The first frame where they part is where GDB took a return address from
the stack that the CPU did not push: the stack was overwritten there (or
GDB's unwind information is wrong). libgcswalk's gcswalk_verify() names the
frame record whose saved return address is not on the GCS."""
import gdb

from . import chain
from . import library as L
from .symbols import describe
from .walk import SourceTarget, ThreadState


def gdb_frames(limit):
    """GDB's unwind, newest first: [(pc, frame type)], and why it stopped."""
    out = []
    try:
        frame = gdb.newest_frame()
    except gdb.error:
        return out, "no frames"
    reason = None
    while frame is not None and len(out) < limit:
        try:
            if frame.type() != gdb.INLINE_FRAME:
                out.append((frame.pc() & 0xFFFFFFFFFFFFFFFF, frame.type()))
            older = frame.older()
            if older is None:
                code = frame.unwind_stop_reason()
                if code != gdb.FRAME_UNWIND_NO_REASON:
                    reason = gdb.frame_stop_reason_string(code)
        except gdb.error as e:
            reason = str(e).strip().splitlines()[0] if str(e).strip() else "unwind error"
            break
        frame = older
    return out, reason


def _name(symbolizer, address, is_return):
    return describe(symbolizer.locate(address, is_return))[0]


def run(lib, symbolizer):
    """(value for $_gcs_verify, lines of text): 0 when GDB's unwind agrees
    with the GCS, else the number of the first frame where they part."""
    state = ThreadState(lib)
    state.require_gcs()
    with SourceTarget(lib, state) as target:
        frames, _ = target.walk()
        records = target.verify_records()
    gcs = chain.code_frames(frames)
    ours, reason = gdb_frames(len(gcs) + 1)
    head = "%s: GDB's unwind (%d frame%s) against the GCS (%d frame%s)" % (
        state.label, len(ours), "" if len(ours) == 1 else "s", len(gcs),
        "" if len(gcs) == 1 else "s")
    part = None
    for i, (pc, _) in enumerate(ours):
        if i >= len(gcs) or gcs[i][2] != pc:
            part = i
            break
    if part is None:
        text = [head + ": agree"]
        if len(ours) < len(gcs):
            text.append("  GDB's unwind stops after frame #%d%s; the GCS goes on to #%d "
                        "(`gcs bt` shows them)" % (len(ours) - 1,
                                                   " (%s)" % reason if reason else "",
                                                   len(gcs) - 1))
        return 0, text
    text = [head + ": they part at frame #%d" % part]
    if part < len(gcs):
        _, kind, address, slot = gcs[part]
        text.append("  GCS: #%-3d %s  (GCS slot 0x%016x)" % (
            part, _name(symbolizer, address, kind in chain.RETURNS), slot))
    else:
        text.append("  GCS: no frame #%d: the GCS ends at #%d" % (part, len(gcs) - 1))
    pc = ours[part][0]
    text.append("  GDB: #%-3d %s" % (part, _name(symbolizer, pc, True)))
    text.extend(_explain(state, symbolizer, gcs, ours, part, records))
    return part, text


def _explain(state, symbolizer, gcs, ours, part, records):
    out = []
    if part >= len(gcs):
        out.append("  GDB shows frames past the GCS's end: they are not calls the CPU made")
        return out
    callee = gcs[part - 1]
    callee_name = symbolizer.short_name(callee[2], callee[1] in chain.RETURNS)
    caller_name = symbolizer.short_name(gcs[part][2], True)
    if part == 1 and ours[1][0] == state.regs["lr"]:
        out.append("  GDB took frame #1 from the link register x30 = 0x%016x; the CPU's "
                   "return address for frame #0 (%s) is 0x%016x (%s): x30 was loaded from "
                   "an overwritten frame record" % (state.regs["lr"], callee_name,
                                                    gcs[1][2], caller_name))
    else:
        out.append("  GDB read frame #%d (%s)'s return address from the stack; the CPU "
                   "pushed 0x%016x (%s) on the GCS" % (part - 1, callee_name, gcs[part][2],
                                                      caller_name))
    bad = [r for r in records or [] if r[2] == L.RECORD_MISMATCH]
    if bad:
        record, ret, _, _ = bad[0]
        out.append("  the frame record at 0x%016x holds return address 0x%016x, which is "
                   "not on the GCS" % (record, ret))
    fp = state.regs["fp"]
    if fp % 16:
        out.append("  the frame pointer x29 = 0x%016x is not a frame record address: it was "
                   "loaded from an overwritten stack" % fp)
    out.append("  the stack was overwritten from frame #%d (%s) up: GDB's frames from #%d on "
               "do not hold; `gcs bt` shows the true chain" % (part - 1, callee_name, part))
    return out
