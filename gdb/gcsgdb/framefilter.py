# SPDX-License-Identifier: MIT
"""A frame filter, off by default, that makes GDB's own `bt` follow the GCS
where GDB's unwind leaves it.

Enabled with `enable frame-filter global gcs`, it changes one thing: GDB's
frames are printed as long as their PCs equal the GCS's frames, in order;
from the first frame where they part, GDB's frames are dropped and the
GCS's remaining frames printed in their place, named by GDB, without frame
numbers (GDB prints none for frames a filter adds) and without arguments
or locals (the GCS gives return addresses only). Where GDB's unwind agrees
with the GCS, or stops early (at main), `bt` is unchanged. Every failure
(no GCS, no library) leaves `bt` as it was: the filter never breaks it."""
import gdb
from gdb.FrameDecorator import FrameDecorator

from . import chain
from .symbols import Symbolizer, elf_symbol


class GcsFrame(FrameDecorator):
    """A frame from the GCS, borrowing GDB's last sound frame as its base."""

    def __init__(self, base, address, location):
        super().__init__(base)
        self._address, self._loc = address, location

    def _level(self):
        return self._loc.levels[-1] if self._loc.levels else None

    def function(self):
        level = self._level()
        name = level.function if level else "??"
        if (not level or not level.file) and self._loc.module:
            return "%s [from the GCS, in %s]" % (name, self._loc.module.rsplit("/", 1)[-1])
        return "%s [from the GCS]" % name

    def address(self):
        return self._address

    def filename(self):
        level = self._level()
        return level.file if level and level.file else None

    def line(self):
        level = self._level()
        return level.line if level and level.line else None

    def frame_args(self):
        return None

    def frame_locals(self):
        return None

    def elided(self):
        return None


class GdbFrame(FrameDecorator):
    """One of GDB's own frames, passed through. GDB's default decorator
    prints a frame without symbols as `in  () at LIBRARY`; this keeps
    `bt`'s own `in ?? ()` (the library is left out)."""

    def function(self):
        name = super().function()
        if isinstance(name, int):  # no function: GDB's decorator gives the PC
            name = elf_symbol(name)[0]
        return name or "??"

    def filename(self):
        sal = self.inferior_frame().find_sal()
        return super().filename() if sal is not None and sal.symtab is not None else None


class GcsFrameFilter:
    def __init__(self, library):
        self.name = "gcs"
        self.priority = 100
        self.enabled = False
        self._library = library
        gdb.frame_filters[self.name] = self

    def filter(self, frame_iter):
        try:
            from .walk import walk_selected  # pylint: disable=import-outside-toplevel
            _, frames, _ = walk_selected(self._library())
            gcs = [(kind, address) for _, kind, address, _ in chain.code_frames(frames)]
        except Exception:  # pylint: disable=broad-except
            return frame_iter  # no GCS here: GDB's own bt, untouched
        return self._follow(frame_iter, gcs)

    @staticmethod
    def _follow(frame_iter, gcs):
        i, last = 0, None
        for decorator in frame_iter:
            frame = decorator.inferior_frame()
            if frame.type() == gdb.INLINE_FRAME:
                yield GdbFrame(decorator)
                continue
            if i < len(gcs) and frame.pc() == gcs[i][1]:
                yield GdbFrame(decorator)
                last, i = decorator, i + 1
                continue
            break
        else:
            return
        if last is None:
            return
        names = Symbolizer()
        for kind, address in gcs[i:]:
            yield GcsFrame(last.inferior_frame(), address,
                           names.locate(address, kind in chain.RETURNS))
