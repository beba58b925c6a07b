# SPDX-License-Identifier: MIT
"""GDB's own unwind of the selected thread against its GCS (riscv64: its
Zicfiss shadow stack; the words are the architecture's), frame by frame.

GDB's frames (inline frames left out: they share their function's PC) and
the GCS's numbered frames must carry the same addresses in the same order.
The first frame where they part is where GDB took a return address from
the stack that the CPU did not push: the stack was overwritten there (or
GDB's unwind information is wrong). libgcswalk's gcswalk_verify() names the
frame record whose saved return address is not on the GCS, or whose saved
frame pointer was overwritten; GDB's frame whose x29 is that record is the
frame it belongs to. A frame record the GCS disowns is reported even where
GDB's unwind agrees (GDB unwinds by the CFI, which may not read it).

On riscv64 a function pushes its own return address: a frame whose callee
pushed nothing (code built without -fcf-protection, such as glibc's) is in
GDB's unwind and not on the shadow stack. There the shadow stack's frames
must come in GDB's, in order, GDB's others between them; they part where a
shadow-stack frame is not among GDB's frames that are left."""
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
    a = state.arch
    ours, reason = gdb_frames(len(gcs) + 1, a.fp)
    head = "%s: GDB's unwind (%d frame%s) against %s (%d frame%s)" % (
        state.label, len(ours), "" if len(ours) == 1 else "s", a.stack, len(gcs),
        "" if len(gcs) == 1 else "s")
    if a.record_offset:
        return _run_in_order(state, symbolizer, gcs, ours, reason, records, head)
    part = None
    for i, (pc, _) in enumerate(ours):
        if i >= len(gcs) or gcs[i][2] != pc:
            part = i
            break
    ctx = _Context(state, symbolizer, gcs, ours, records)
    if part is None:
        text = [head + ": agree"]
        if len(ours) < len(gcs):
            text.append("  GDB's unwind stops after frame #%d%s; %s goes on to #%d "
                        "(`gcs bt` shows them)" % (len(ours) - 1,
                                                   " (%s)" % reason if reason else "",
                                                   a.stack, len(gcs) - 1))
        bad = ctx.bad_records()
        if bad:
            text.append("  but the frame records (the %s chain) do not: GDB's unwind did "
                        "not go by them" % a.fp)
            text.extend(ctx.record_lines(bad, None))
        return 0, text
    if part >= len(gcs) and ctx.other_stack():
        return 0, [head + ": agree as far as %s goes" % a.stack,
                   "  GDB's frames from #%d on are on the stack the thread switched away "
                   "from; the %s it left was not found, so they are not checked"
                   % (part, a.feature)]
    text = [head + ": they part at frame #%d" % part]
    if part < len(gcs):
        _, kind, address, slot = gcs[part]
        text.append("  %s: #%-3d %s  (%s slot 0x%016x)" % (
            a.feature, part, _name(symbolizer, address, kind in chain.RETURNS), a.feature, slot))
    else:
        text.append("  %s: no frame #%d: %s ends at #%d" % (a.feature, part, a.stack,
                                                             len(gcs) - 1))
    pc = ours[part][0]
    text.append("  GDB: #%-3d %s" % (part, _name(symbolizer, pc, True)))
    text.extend(ctx.explain(part))
    return part, text


def _run_in_order(state, symbolizer, gcs, ours, reason, records, head):
    """riscv64's verdict: GCS's frames in GDB's, in order (see above)."""
    a = state.arch
    j, skipped = 0, 0
    for i, (_, kind, address, slot) in enumerate(gcs):
        k = j
        while k < len(ours) and ours[k][0] != address:
            k += 1
        if k == len(ours):
            if j < len(ours):
                return _parted(state, symbolizer, (i, kind, address, slot), j, ours, records,
                               head)
            text = [head + ": agree"]
            text.append("  GDB's unwind stops after frame #%d%s; %s goes on (`gcs bt` shows "
                        "it)" % (len(ours) - 1, " (%s)" % reason if reason else "", a.stack))
            return 0, text + _skipped_line(skipped, a)
        skipped += k - j
        j = k + 1
    return 0, [head + ": agree"] + _skipped_line(skipped, a)


def _skipped_line(skipped, a):
    if not skipped:
        return []
    return ["  GDB shows %d frame%s that %s has not: their callees pushed nothing (code "
            "built without -fcf-protection, such as glibc's)" % (
                skipped, "" if skipped == 1 else "s", a.stack)]


def _parted(state, symbolizer, frame, j, ours, records, head):
    """The riscv64 text where GCS frame FRAME is not among GDB's frames
    from #J on."""
    a = state.arch
    i, kind, address, slot = frame
    text = [head + ": they part at frame #%d" % j,
            "  %s: #%-3d %s  (%s slot 0x%016x) is not among GDB's frames from #%d on"
            % (a.feature, i, _name(symbolizer, address, kind in chain.RETURNS), a.feature,
               slot, j),
            "  GDB: #%-3d %s" % (j, _name(symbolizer, ours[j][0], True))]
    ctx = _Context(state, symbolizer, [], ours, records)
    bad = ctx.bad_records()
    if bad:
        text.extend(ctx.record_lines(bad, j))
    fp = state.regs["fp"]
    if fp % 16:
        text.append("  the frame pointer %s = 0x%016x is not a frame record address: it "
                    "was loaded from an overwritten stack" % (a.fp, fp))
    text.append("  the stack was overwritten there: GDB's frames from #%d on do not hold; "
                "`gcs bt` shows the true chain" % j)
    return j, text


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
        """The number of GDB's frame whose frame record is RECORD (at its
        frame pointer plus the architecture's offset), or None."""
        for i, (_, fp) in enumerate(self.ours):
            if fp is not None and fp + self.state.arch.record_offset == record:
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
                       "is not on %s%s" % (record, self._whose(record), ret,
                                          self.state.arch.stack, took))
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
        a = self.state.arch
        if part >= len(self.gcs):
            out.append("  GDB shows frames past %s's end: they are not calls the CPU made"
                       % a.stack)
            return out
        callee_name = self.name(part - 1)
        caller_name = self.name(part)
        lr = self.state.regs["lr"]
        if part == 1 and self.ours[1][0] == lr:
            out.append("  GDB took frame #1 from the link register %s = 0x%016x; the CPU's "
                       "return address for frame #0 (%s) is 0x%016x (%s): %s was loaded from "
                       "an overwritten frame record" % (a.lr, lr, callee_name, self.gcs[1][2],
                                                        caller_name, a.lr))
        else:
            out.append("  GDB read frame #%d (%s)'s return address from the stack; the CPU "
                       "pushed 0x%016x (%s) on %s" % (part - 1, callee_name,
                                                       self.gcs[part][2], caller_name, a.stack))
        bad = self.bad_records()
        if bad:
            out.extend(self.record_lines(bad, part))
        fp = self.state.regs["fp"]
        if fp % 16:
            out.append("  the frame pointer %s = 0x%016x is not a frame record address: it "
                       "was loaded from an overwritten stack" % (a.fp, fp))
        out.append("  the stack was overwritten from frame #%d (%s) up: GDB's frames from #%d "
                   "on do not hold; `gcs bt` shows the true chain" % (part - 1, callee_name,
                                                                     part))
        return out


def _read_u64(address):
    try:
        return struct.unpack("<Q", bytes(gdb.selected_inferior().read_memory(address, 8)))[0]
    except (gdb.MemoryError, gdb.error, ValueError, OverflowError, struct.error):
        return None
