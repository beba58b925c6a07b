# SPDX-License-Identifier: MIT
"""The words and registers of each architecture the plugin walks: arm64's
Guarded Control Stack (GCS) and riscv64's Zicfiss shadow stack. Chosen by
the architecture GDB gives the selected frame, so one plugin serves both
(and gdb-multiarch reads cores of either)."""
from . import library as L
from .library import GcsError


class Arch:
    """One architecture's facts for the commands' words and registers."""

    def __init__(self, **kw):
        self.name = kw["name"]              # libgcswalk's name
        self.machine = kw["machine"]        # its ELF machine, for the source target
        self.feature = kw["feature"]        # "GCS", "Zicfiss"
        self.stack = kw["stack"]            # "the GCS", "the shadow stack"
        self.pointer = kw["pointer"]        # "GCSPR", "ssp"
        self.lr, self.fp = kw["lr"], kw["fp"]  # GDB's names of the link register, frame pointer
        # Where a frame record {previous fp, return} lies from the frame
        # pointer: arm64 at x29, riscv64 16 bytes below s0.
        self.record_offset = kw["record_offset"]
        self.note = kw["note"]              # the core note and ptrace regset
        self.modes = kw["modes"]            # (bit, name) of the mode bits
        self.gdb_prefix = kw["gdb_prefix"]  # GDB's architecture names start so


ARM64 = Arch(name="arm64", machine=183, feature="GCS", stack="the GCS", pointer="GCSPR",
             lr="x30", fp="x29", record_offset=0, note="NT_ARM_GCS", gdb_prefix="aarch64",
             modes=((L.GCS_ENABLE, "enable"), (L.GCS_WRITE, "write"), (L.GCS_PUSH, "push")))
# riscv's shadow stack has one mode (enable); Zicfilp's landing pads come
# in the same regset. GDB has no register for either: live threads' state
# is read through libgcswalk (the regset, from GDB's own process, the
# tracer), cores' from their note.
RISCV64 = Arch(name="riscv64", machine=243, feature="Zicfiss", stack="the shadow stack",
               pointer="ssp", lr="ra", fp="fp", record_offset=-16, note="NT_RISCV_USER_CFI",
               gdb_prefix="riscv:rv64",
               modes=((L.GCS_ENABLE, "enable"), (L.LANDING_PADS, "landing-pads")))

_ALL = (ARM64, RISCV64)


def of_frame(frame):
    """The Arch of FRAME's architecture, or GcsError for one without a
    shadow stack the plugin knows."""
    name = frame.architecture().name()
    for a in _ALL:
        if name.startswith(a.gdb_prefix):
            return a
    raise GcsError("no shadow stack in the target: it is %s, not arm64 (GCS) or riscv64 "
                   "(Zicfiss)" % name)
