# SPDX-License-Identifier: MIT
"""Following a GCS switch back to the GCS the thread left.

A thread that switches stacks and GCSs (GCSSS1/GCSSS2, as a coroutine
library does) runs on a GCS whose oldest entry is the call made on it; the
calls before the switch are on the GCS it left, which GCSSS2 capped with a
switch cap token (its own slot's page | 1) on top of them. No register
points to that GCS any more. It is found by what the thread's stack still
says of the calls before the switch: the return addresses of the frame
records on the other stack (gcswalk_verify()'s OTHER_STACK verdicts), else
GDB's own frames past the GCS's end. The entry right under a valid switch
cap token, in a mapping other than the current GCS's, must be one of them;
the walk goes on from that token."""
import struct

from . import inferior
from . import library as L

# Switches followed at most (coroutines of coroutines), the most bytes of
# one mapping searched for the token, and GDB's frames past the GCS's end
# taken as hints.
MAX_SWITCHES = 8
MAX_SEARCH = 64 << 20
MAX_GDB_HINTS = 16


def _valid_cap(token, slot):
    return token & ~0xFFF == slot & ~0xFFF and token & 0xFFF == 1


def _ranges(state):
    ranges = inferior.core_segments() if state.core_path else inferior.live_mappings()
    return [(s, e) for s, e in ranges if 0 < e - s <= MAX_SEARCH]


def _read(start, end):
    try:
        return bytes(inferior.gdb.selected_inferior().read_memory(start, end - start))
    except (inferior.gdb.MemoryError, inferior.gdb.error, ValueError, OverflowError):
        return None


def find_cap(state, hints, skip):
    """The slot of the switch cap token whose next entry is one of HINTS
    (tried in order), in a mapping not overlapping any range in SKIP; or
    None."""
    ranges = [r for r in _ranges(state)
              if not any(r[0] < e and s < r[1] for s, e in skip)]
    contents = {}
    for hint in hints:
        if not hint or hint & 3:
            continue
        pattern = struct.pack("<Q", hint)
        for start, end in ranges:
            if (start, end) not in contents:
                contents[(start, end)] = _read(start, end)
            data = contents[(start, end)]
            if data is None:
                continue
            at = data.find(pattern, 8)
            while at >= 0:
                if at % 8 == 0:
                    slot = start + at - 8
                    token = struct.unpack_from("<Q", data, at - 8)[0]
                    if _valid_cap(token, slot):
                        return slot, (start, end)
                at = data.find(pattern, at + 1)
    return None


def follow(state, frames, walk_from, hints, current):
    """FRAMES, a walk that ended at the top of the current GCS (in range
    CURRENT), followed through GCS switches: the frames of each GCS left,
    from its switch cap token on. WALK_FROM(gcspr) walks from another GCS
    pointer; HINTS are return addresses of calls made before the switch."""
    skip = [current] if current else []
    for _ in range(MAX_SWITCHES):
        if not frames or frames[-1][0] != L.FRAME_TERMINATOR:
            break
        found = find_cap(state, hints, skip)
        if found is None:
            break
        slot, mapping = found
        more = walk_from(slot)
        start = next((i for i, f in enumerate(more)
                      if f[0] == L.FRAME_SWITCH_CAP and f[2] == slot), None)
        if start is None:
            break
        frames = frames[:-1] + more[start:]
        skip.append(mapping)
    return frames
