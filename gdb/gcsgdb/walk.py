# SPDX-License-Identifier: MIT
"""A walk of the selected thread's shadow stack (arm64's GCS, riscv64's
Zicfiss) through libgcswalk's caller-supplied source: the registers GDB
shows, and a memory reader that reads through GDB. Where this GDB has no
GCS registers (gdb-multiarch 13, GDB 18 on a core whose registers it does
not show, and always on riscv64), the state comes from the core's note
(NT_ARM_GCS, NT_RISCV_USER_CFI), read by libgcswalk, or for a live riscv64
thread from its regset, which libgcswalk reads from GDB's own process (GDB
is the tracer; nothing is attached or resumed). A chain that ends at the
top of a GCS the thread switched to goes on on the GCS it left
(switch.py: arm64's cap tokens)."""
import copy
import ctypes

from . import arch as A
from . import chain
from . import inferior
from . import library as L
from . import switch
from .library import GcsError

# Every frame is walked, however deep, as gcsprof inspect does.
ALL_FRAMES = 1 << 30
# Frame records checked by gcswalk_verify().
MAX_RECORDS = 4096


class CoreNote:
    """The core file's own view of one thread (GCS state, fatal signal),
    through gcswalk_target_open_core()."""

    def __init__(self, lib, path, tid):
        self.path, self.gcs, self.signal, self.gcs_region = path, None, None, None
        self.have_thread = False
        target = ctypes.c_void_p()
        msg = ctypes.c_void_p()
        ret = lib.target_open_core(ctypes.byref(target), path.encode(), ctypes.byref(msg))
        detail = lib.take_errmsg(msg)
        if ret < 0:
            raise GcsError("cannot read the core file %s: %s%s" % (
                path, lib.strerror_of(ret), " (%s)" % detail if detail else ""))
        try:
            self._read(lib, target, tid)
        finally:
            lib.target_close(target)

    def _read(self, lib, target, tid):
        index = lib.target_thread_index(target, tid)
        if index >= 0:
            info = L.ThreadInfo()
            if lib.target_thread(target, index, ctypes.byref(info)) == L.OK:
                self.have_thread = True
                if info.have_gcs:
                    g = info.gcs
                    self.gcs = (g.features_enabled, g.features_locked, g.gcspr)
        if lib.opt_target_fatal_signal:
            si = L.SignalInfo()
            si.size = ctypes.sizeof(si)
            if lib.opt_target_fatal_signal(target, ctypes.byref(si)) == L.OK:
                self.signal = (si.signo, si.code, si.address, si.tid)
        if lib.opt_target_region_count and lib.opt_target_region and self.gcs:
            for i in range(lib.opt_target_region_count(target)):
                r = L.Region()
                r.size = ctypes.sizeof(r)
                if (lib.opt_target_region(target, i, ctypes.byref(r)) == L.OK
                        and r.kind == L.REGION_GCS and r.start <= self.gcs[2] < r.end):
                    self.gcs_region = (r.start, r.end)


def live_regset(lib, pid, tid):
    """(features_enabled, features_locked, pointer) of live thread TID of
    PID from its regset, which libgcswalk reads with ptrace from this
    process, GDB's, the tracer that holds the thread stopped; None when
    the kernel gives none (or this libgcswalk cannot)."""
    if not lib.opt_target_open_pid:
        return None
    target = ctypes.c_void_p()
    msg = ctypes.c_void_p()
    ret = lib.opt_target_open_pid(ctypes.byref(target), pid, L.ATTACH_STOPPED, 0,
                                  ctypes.byref(msg))
    lib.take_errmsg(msg)
    if ret < 0:
        return None
    try:
        index = lib.target_thread_index(target, tid)
        info = L.ThreadInfo()
        if index < 0 or lib.target_thread(target, index, ctypes.byref(info)) != L.OK:
            return None
        if not info.have_gcs:
            return None
        return (info.gcs.features_enabled, info.gcs.features_locked, info.gcs.gcspr)
    finally:
        lib.target_close(target)


class ThreadState:
    """The selected thread as libgcswalk will see it."""

    def __init__(self, lib):
        self.thread = inferior.selected_thread()
        self.label = inferior.thread_label(self.thread)
        pid, lwp, _ = self.thread.ptid
        self.pid, self.tid = pid, lwp or pid
        frame, self.arch = inferior.newest_frame()
        self.regs = inferior.registers(frame, self.arch)
        self.core_path = inferior.core_file()
        self.core = None
        self.gcs = inferior.gcs_registers(frame, self.arch)
        self.gcs_from = "GDB's registers"
        if self.gcs is None and not self.core_path:
            self.gcs = live_regset(lib, self.pid, self.tid)
            self.gcs_from = "the thread's %s regset" % self.arch.note
        if self.core_path:
            try:
                self.core = CoreNote(lib, self.core_path, self.tid)
            except GcsError:
                if self.gcs is None:
                    raise
                return  # GDB's registers suffice; the note only adds to them
            if self.gcs is None:
                self.gcs, self.gcs_from = self.core.gcs, "the core's %s note" % self.arch.note

    def region(self):
        """(start, end) of the mapping (core: the segment) that holds the
        thread's shadow stack, or None when GDB does not know it."""
        if self.core:
            return self.core.gcs_region or inferior.core_segment(self.gcs[2])
        return inferior.gcs_mapping(self.gcs[2])

    def require_gcs(self):
        """Raise the one-line reason when this thread has no GCS to walk."""
        a = self.arch
        if self.gcs is None:
            if self.core_path:
                raise GcsError("no %s in the target: the core has no %s note for %s "
                               "(a kernel or CPU without %s)" % (a.feature, a.note, self.label,
                                                                 a.feature))
            if a is not A.ARM64:
                raise GcsError("no %s in the target: the kernel gives no %s regset for %s "
                               "(a kernel or CPU without %s)" % (a.feature, a.note, self.label,
                                                                 a.feature))
            raise GcsError("no GCS in the target: GDB shows no $gcspr for %s "
                           "(a kernel or CPU without GCS, or a GDB before 17: "
                           "see docs/gdb.md)" % self.label)
        if not self.gcs[0] & L.GCS_ENABLE:
            if a is not A.ARM64:
                raise GcsError("%s is not enabled in %s (features_enabled 0x%x): the program "
                               "runs without a shadow stack" % (a.feature, self.label,
                                                                self.gcs[0]))
            raise GcsError("GCS is not enabled in %s (gcs_features_enabled 0x%x): the program "
                           "runs without a Guarded Control Stack" % (self.label, self.gcs[0]))


class SourceTarget:
    """A libgcswalk target of the one selected thread; close() it."""

    def __init__(self, lib, state):
        self.lib = lib
        self._reader = inferior.make_reader()  # kept alive while C holds it
        th = L.SourceThread()
        th.size = ctypes.sizeof(th)
        th.tid, th.name, th.have_registers = state.tid, None, 1
        th.pc, th.lr, th.sp, th.fp = (state.regs[k] for k in ("pc", "lr", "sp", "fp"))
        if state.gcs is not None:
            th.have_gcs = 1
            (th.gcs.features_enabled, th.gcs.features_locked, th.gcs.gcspr) = state.gcs
        self._threads = (L.SourceThread * 1)(th)
        src = L.Source()
        src.size = ctypes.sizeof(src)
        src.pid = state.pid
        src.read = self._reader
        src.data = None
        src.threads = ctypes.cast(self._threads, ctypes.POINTER(L.SourceThread))
        src.thread_count = 1
        src.mappings, src.mapping_count = None, 0
        src.machine = state.arch.machine
        if state.arch is not A.ARM64:
            # The files mapped: libgcswalk's CFI says where a leaf's
            # caller is only in ra (its LR frame).
            maps = inferior.file_mappings()
            self._paths = [m[3].encode() for m in maps]
            self._maps = (L.Mapping * max(len(maps), 1))()
            for i, (start, end, offset, _) in enumerate(maps):
                self._maps[i].start, self._maps[i].end = start, end
                self._maps[i].offset, self._maps[i].path = offset, self._paths[i]
            src.mappings = ctypes.cast(self._maps, ctypes.POINTER(L.Mapping))
            src.mapping_count = len(maps)
        self.handle = ctypes.c_void_p()
        msg = ctypes.c_void_p()
        ret = lib.target_open_source(ctypes.byref(self.handle), ctypes.byref(src),
                                     ctypes.byref(msg))
        detail = lib.take_errmsg(msg)
        if ret < 0:
            raise GcsError("libgcswalk refused the thread: %s%s" % (
                lib.strerror_of(ret), " (%s)" % detail if detail else ""))

    def error(self, status):
        detail = self.lib.target_errmsg(self.handle)
        detail = detail.decode(errors="replace") if detail else ""
        return "%s%s" % (self.lib.strerror_of(status), " (%s)" % detail if detail else "")

    def walk(self):
        """Every frame, newest first, and the end status (END or CUT)."""
        opts = self.lib.walk_options(ALL_FRAMES)
        walk = ctypes.c_void_p()
        ret = self.lib.walk_begin(ctypes.byref(walk), self.handle, 0, ctypes.byref(opts))
        if ret < 0:
            raise GcsError("cannot walk the GCS: %s" % self.error(ret))
        frames = []
        try:
            frame = L.Frame()
            while True:
                ret = self.lib.walk_next(walk, ctypes.byref(frame))
                if ret != L.OK:
                    break
                frames.append((frame.kind, frame.address, frame.slot))
        finally:
            self.lib.walk_free(walk)
        if ret < 0:
            raise GcsError("the GCS walk failed: %s" % self.error(ret))
        return frames, ret

    def verify_records(self):
        """gcswalk_verify(): the x29 chain of frame records against the GCS."""
        checks = (L.RecordCheck * MAX_RECORDS)()
        count = ctypes.c_size_t()
        ret = self.lib.verify(self.handle, 0, checks, MAX_RECORDS, ctypes.byref(count))
        if ret < 0:
            return None
        return [(c.record, c.return_address, c.verdict, c.gcs_slot)
                for c in checks[:count.value]]

    def close(self):
        if self.handle:
            self.lib.target_close(self.handle)
            self.handle = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def follow_switches(lib, state, target, frames, records=None):
    """FRAMES (TARGET's walk of STATE's thread) followed back through the
    GCS switches the thread made (switch.py); RECORDS: TARGET's
    verify_records(), when the caller has them."""
    if state.arch is not A.ARM64 or not frames or frames[-1][0] != L.FRAME_TERMINATOR:
        return frames
    if records is None:
        records = target.verify_records()
    hints = [r[1] for r in records or [] if r[2] == L.RECORD_OTHER_STACK]
    # GDB's frames past the GCS's end: calls made before a switch.
    depth = len(chain.code_frames(frames))
    ours, _ = inferior.gdb_frames(depth + switch.MAX_GDB_HINTS, state.arch.fp)
    hints += [pc for pc, _ in ours[depth:]]
    if not hints:
        return frames
    gcspr = state.gcs[2]
    if state.core:
        current = state.core.gcs_region or inferior.core_segment(gcspr)
    else:
        current = inferior.gcs_mapping(gcspr)

    def walk_from(slot):
        other = copy.copy(state)
        other.gcs = state.gcs[:2] + (slot,)
        try:
            with SourceTarget(lib, other) as t:
                return t.walk()[0]
        except GcsError:
            return []

    return switch.follow(state, frames, walk_from, hints, current)


def walk_selected(lib):
    """(state, frames, end status) of the selected thread, or GcsError."""
    state = ThreadState(lib)
    state.require_gcs()
    with SourceTarget(lib, state) as target:
        frames, status = target.walk()
        frames = follow_switches(lib, state, target, frames)
    return state, ended_at_mapping(state, frames), status


def ended_at_mapping(state, frames):
    """FRAMES without a last unreadable slot at the very end of the shadow
    stack's mapping: riscv64's shadow stacks have no top marker and end
    there (a core walk ends at its segment's end likewise)."""
    if state.arch is not A.ARM64 and frames and frames[-1][0] == L.FRAME_UNREADABLE:
        region = state.region()
        if region and frames[-1][2] == region[1]:
            return frames[:-1]
    return frames
