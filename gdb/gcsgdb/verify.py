# SPDX-License-Identifier: MIT
"""GDB's own unwind of the selected thread against its GCS, frame by frame.

GDB's frames (inline frames left out: they share their function's PC) and
the GCS's numbered frames must carry the same addresses in the same order.
The first frame where they part is where GDB took a return address from
the stack that the CPU did not push: the stack was overwritten there (or
GDB's unwind information is wrong). libgcswalk's gcswalk_verify() names the
frame record whose saved return address is not on the GCS, or whose saved
frame pointer was overwritten; GDB's frame whose x29 is that record is the
frame it belongs to. A frame record the GCS disowns is reported even where
GDB's unwind agrees (GDB unwinds by the CFI, which may not read it)."""
import struct

import gdb

from . import chain
from . import library as L
from .inferior import gdb_frames
from .symbols import describe
from .walk import SourceTarget, ThreadState, follow_switches


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
        frames = follow_switches(lib, state, target, frames, records)
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
    ctx = _Context(state, symbolizer, gcs, ours, records)
    if part is None:
        text = [head + ": agree"]
        if len(ours) < len(gcs):
            text.append("  GDB's unwind stops after frame #%d%s; the GCS goes on to #%d "
                        "(`gcs bt` shows them)" % (len(ours) - 1,
                                                   " (%s)" % reason if reason else "",
                                                   len(gcs) - 1))
        bad = ctx.bad_records()
        if bad:
            text.append("  but the frame records (the x29 chain) do not: GDB's unwind did "
                        "not go by them")
            text.extend(ctx.record_lines(bad, None))
        return 0, text
    if part >= len(gcs) and ctx.other_stack():
        return 0, [head + ": agree as far as the GCS goes",
                   "  GDB's frames from #%d on are on the stack the thread switched away "
                   "from; the GCS it left was not found, so they are not checked" % part]
    text = [head + ": they part at frame #%d" % part]
    if part < len(gcs):
        _, kind, address, slot = gcs[part]
        text.append("  GCS: #%-3d %s  (GCS slot 0x%016x)" % (
            part, _name(symbolizer, address, kind in chain.RETURNS), slot))
    else:
        text.append("  GCS: no frame #%d: the GCS ends at #%d" % (part, len(gcs) - 1))
    pc = ours[part][0]
    text.append("  GDB: #%-3d %s" % (part, _name(symbolizer, pc, True)))
    text.extend(ctx.explain(part))
    return part, text


class _Context:
    """What the explanation of a verdict draws on."""

    def __init__(self, state, symbolizer, gcs, ours, records):
        self.state, self.symbolizer, self.gcs, self.ours = state, symbolizer, gcs, ours
        self.records = records or []

    def name(self, n):
        """The short name of GCS frame #N."""
        _, kind, address, _ = self.gcs[n]
        return self.symbolizer.short_name(address, kind in chain.RETURNS)

    def bad_records(self):
        return [r for r in self.records if r[2] in (L.RECORD_MISMATCH, L.RECORD_BAD_LINK)]

    def other_stack(self):
        return any(r[2] == L.RECORD_OTHER_STACK for r in self.records)

    def owner(self, record):
        """The number of GDB's frame whose x29 is RECORD, or None."""
        for i, (_, fp) in enumerate(self.ours):
            if fp == record:
                return i
        return None

    def _whose(self, record):
        i = self.owner(record)
        if i is None:
            return ""
        name = self.name(i) if i < len(self.gcs) else "??"
        return " (frame #%d's, %s)" % (i, name)

    def record_lines(self, bad, part):
        out = []
        record, ret, verdict, _ = bad[0]
        if verdict == L.RECORD_MISMATCH:
            took = ""
            i = self.owner(record)
            if (part is not None and i is not None and i + 1 == part
                    and self.ours[part][0] == ret):
                took = ": GDB took frame #%d from it" % part
            out.append("  the frame record at 0x%016x%s holds return address 0x%016x, which "
                       "is not on the GCS%s" % (record, self._whose(record), ret, took))
        else:
            link = _read_u64(record)
            out.append("  the frame record at 0x%016x%s holds the right return address "
                       "0x%016x, but its saved frame pointer%s points below it, where no "
                       "older frame of this stack can be: it was overwritten" % (
                           record, self._whose(record), ret,
                           " 0x%016x" % link if link is not None else ""))
        return out

    def explain(self, part):
        out = []
        if part >= len(self.gcs):
            out.append("  GDB shows frames past the GCS's end: they are not calls the CPU made")
            return out
        callee_name = self.name(part - 1)
        caller_name = self.name(part)
        lr = self.state.regs["lr"]
        if part == 1 and self.ours[1][0] == lr:
            out.append("  GDB took frame #1 from the link register x30 = 0x%016x; the CPU's "
                       "return address for frame #0 (%s) is 0x%016x (%s): x30 was loaded from "
                       "an overwritten frame record" % (lr, callee_name, self.gcs[1][2],
                                                        caller_name))
        else:
            out.append("  GDB read frame #%d (%s)'s return address from the stack; the CPU "
                       "pushed 0x%016x (%s) on the GCS" % (part - 1, callee_name,
                                                          self.gcs[part][2], caller_name))
        bad = self.bad_records()
        if bad:
            out.extend(self.record_lines(bad, part))
        fp = self.state.regs["fp"]
        if fp % 16:
            out.append("  the frame pointer x29 = 0x%016x is not a frame record address: it "
                       "was loaded from an overwritten stack" % fp)
        out.append("  the stack was overwritten from frame #%d (%s) up: GDB's frames from #%d "
                   "on do not hold; `gcs bt` shows the true chain" % (part - 1, callee_name,
                                                                     part))
        return out


def _read_u64(address):
    try:
        return struct.unpack("<Q", bytes(gdb.selected_inferior().read_memory(address, 8)))[0]
    except (gdb.MemoryError, gdb.error, ValueError, OverflowError, struct.error):
        return None
