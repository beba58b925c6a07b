# SPDX-License-Identifier: MIT
"""What GDB knows of the selected thread: its registers, its GCS state, and
its process's memory. GDB owns ptrace (or the core file), so everything
libgcswalk reads goes through GDB."""
import ctypes
import os
import re

import gdb

from . import arch as A
from . import library as L
from .library import GcsError

PAGE = 4096


def selected_thread():
    thread = gdb.selected_thread()
    if thread is None or not thread.is_valid():
        raise GcsError("no process: run or attach to a program, or open a core file")
    return thread


def thread_label(thread):
    pid, lwp, _ = thread.ptid
    return "thread %d (LWP %d)" % (thread.num, lwp or pid)


def newest_frame():
    """The newest frame and its Arch (arm64 or riscv64), or GcsError."""
    try:
        frame = gdb.newest_frame()
    except gdb.error as e:
        raise GcsError("no registers for this thread: %s" % _one_line(e))
    return frame, A.of_frame(frame)


def read_register(frame, name):
    """REGISTER's value as an unsigned 64-bit int, or None where this GDB
    does not know it or the target does not supply it."""
    try:
        value = frame.read_register(name)
        return int(value) & 0xFFFFFFFFFFFFFFFF
    except (ValueError, gdb.error):
        return None


def registers(frame, arch):
    regs = {}
    for key, name in (("pc", "pc"), ("lr", arch.lr), ("sp", "sp"), ("fp", arch.fp)):
        regs[key] = read_register(frame, name)
        if regs[key] is None:
            raise GcsError("GDB gives no %s for this thread" % name)
    return regs


def gcs_registers(frame, arch):
    """(features_enabled, features_locked, gcspr) from GDB's own GCS
    registers (GDB 17 and later, on a kernel with GCS), else None (and
    always on riscv64: GDB has no register for its shadow stack)."""
    if arch is not A.ARM64:
        return None
    gcspr = read_register(frame, "gcspr")
    enabled = read_register(frame, "gcs_features_enabled")
    if gcspr is None or enabled is None:
        return None
    locked = read_register(frame, "gcs_features_locked")
    return enabled, locked or 0, gcspr


_CORE_IN_INFO_TARGET = re.compile(r"core dump file:\s*`([^']*)'")


def core_file():
    """The path of the core file the selected inferior runs on, or None."""
    inferior = gdb.selected_inferior()
    corefile = getattr(inferior, "corefile", None)  # GDB 17
    if corefile is not None and getattr(corefile, "filename", None):
        return corefile.filename
    connection = getattr(inferior, "connection", None)
    if connection is not None and connection.type != "core":
        return None
    try:
        text = gdb.execute("info target", to_string=True)
    except gdb.error:
        return None
    match = _CORE_IN_INFO_TARGET.search(text)
    return match.group(1) if match else None


def live_mappings():
    """[(start, end)] of the live process's mappings, from GDB's view of
    /proc/PID/maps; [] when GDB has none."""
    try:
        text = gdb.execute("info proc mappings", to_string=True)
    except gdb.error:
        return []
    out = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 2 or not fields[0].startswith("0x"):
            continue
        try:
            out.append((int(fields[0], 16), int(fields[1], 16)))
        except ValueError:
            continue
    return out


def gcs_mapping(gcspr):
    """(start, end) of the live process's mapping holding GCSPR, or None."""
    for start, end in live_mappings():
        if start <= gcspr < end:
            return start, end
    return None


_SECTION_IN_INFO_TARGET = re.compile(r"^\s*(0x[0-9a-f]+) - (0x[0-9a-f]+) is (\S+)")


def core_segments():
    """[(start, end)] of the core's dumped segments (its load sections in
    GDB's `info target`); [] when GDB has none."""
    try:
        text = gdb.execute("info target", to_string=True)
    except gdb.error:
        return []
    out = []
    for line in text.splitlines():
        match = _SECTION_IN_INFO_TARGET.match(line)
        if match and match.group(3).startswith("load"):
            out.append((int(match.group(1), 16), int(match.group(2), 16)))
    return out


def core_segment(gcspr):
    """(start, end) of the core's dumped segment holding GCSPR (the GCS is
    dumped whole, as one segment), or None."""
    for start, end in core_segments():
        if start <= gcspr < end:
            return start, end
    return None


def gdb_frames(limit, fp="x29"):
    """GDB's unwind, newest first, inline frames left out: [(pc, the frame
    pointer FP in that frame or None)], and why it stopped."""
    out = []
    try:
        frame = gdb.newest_frame()
    except gdb.error:
        return out, "no frames"
    reason = None
    while frame is not None and len(out) < limit:
        try:
            if frame.type() != gdb.INLINE_FRAME:
                out.append((frame.pc() & 0xFFFFFFFFFFFFFFFF, read_register(frame, fp)))
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


def make_reader():
    """A gcswalk_read_fn reading the selected inferior's memory through
    GDB. No exception may cross into C (ctypes would print a traceback and
    carry on): every failure is a short read."""
    inferior = gdb.selected_inferior()

    def read_chunk(address, size):
        try:
            return bytes(inferior.read_memory(address, size))
        except (gdb.MemoryError, gdb.error, ValueError, OverflowError):
            return None

    def read(_data, address, buf, size, got):
        done = 0
        try:
            if address + size > 1 << 64:
                size = (1 << 64) - address
            data = read_chunk(address, size)
            if data is not None:
                ctypes.memmove(buf, data, size)
                done = size
            else:
                # Page by page up to the first unreadable one, so that a
                # read running off the end of a mapping gives what is there.
                while done < size:
                    step = min(size - done, PAGE - (address + done) % PAGE)
                    data = read_chunk(address + done, step)
                    if data is None:
                        break
                    ctypes.memmove(buf + done, data, step)
                    done += step
        except BaseException:  # pylint: disable=broad-except
            pass  # Ctrl-C too: it must not unwind through C
        if got:
            got[0] = done
        return L.OK if done == size else L.E_IO

    return L.READ_FN(read)


def _one_line(e):
    text = str(e).strip()
    return text.splitlines()[0] if text else e.__class__.__name__


_MAPPING_LINE = re.compile(r"^\s*(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+0x[0-9a-f]+\s+(0x[0-9a-f]+)"
                           r"(?:\s+[rwxsp-]{4})?\s+(/\S.*)$")


def file_mappings():
    """[(start, end, offset, path)] of the files GDB says the process (or
    core) maps, each path under GDB's sysroot where the file is there (a
    core read on another machine); [] when GDB has none."""
    try:
        text = gdb.execute("info proc mappings", to_string=True)
    except gdb.error:
        return []
    sysroot = gdb.parameter("sysroot") or ""
    if sysroot.startswith("target:"):
        sysroot = sysroot[len("target:"):]
    out = []
    for line in text.splitlines():
        match = _MAPPING_LINE.match(line)
        if not match:
            continue
        path = match.group(4).strip()
        if sysroot and os.path.exists(sysroot + path):
            path = sysroot + path
        out.append((int(match.group(1), 16), int(match.group(2), 16),
                    int(match.group(3), 16), path))
    return out
