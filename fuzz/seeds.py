#!/usr/bin/env python3
"""Derive each fuzz harness's seeds from guest-made files (fuzz/make-seeds).

    seeds.py OUT [--profile FILE]... [--elf FILE]... [--proc DIR] CORE...

Writes into OUT/<harness>/:
  core/         each core whole, and a shrunk copy (small-*): the same
                notes, only the pages around each thread's stack pointer
                and GCS pointer kept as PT_LOAD segments (arm64 and riscv64
                cores alike: the registers and shadow-stack notes are read
                by the core's ELF machine)
  core-notes/   each core's PT_NOTE segment
  core-memory/  per arm64 thread: the registers and GCS state as the
                harness's header, then its stack and GCS pages
                (core-memory-fuzz.c, which builds arm64 cores)
  profile/      each profile whole, and a shrunk copy (the first samples)
  build-id/     each ELF file cut after its notes (no section headers)
  proc/         the /proc files in DIR (fuzz/proc-capture.sh), each after
                the byte that picks its parser (proc-fuzz.c); they are
                small, and kept whole
The small-* files are what fuzz/corpus/ keeps (checked in, under 1 MB).
"""

import argparse
import gzip
import os
import struct
import sys

PT_LOAD, PT_NOTE = 1, 4
NT_PRSTATUS, NT_ARM_GCS, NT_RISCV_USER_CFI = 1, 0x410, 0x903
EM_AARCH64, EM_RISCV = 183, 243
STACK_KEEP, GCS_KEEP = 16384, 8192
PAGE = 4096


def phdrs(data):
    """The ELF64 little-endian program headers as tuples."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a little-endian ELF64 file")
    phoff, = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    return [struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize) for i in range(phnum)]


def notes(seg):
    """(name, type, desc) of each note in a note segment."""
    off = 0
    while off + 12 <= len(seg):
        namesz, descsz, ntype = struct.unpack_from("<III", seg, off)
        name_at = off + 12
        desc_at = name_at + ((namesz + 3) & ~3)
        end = desc_at + ((descsz + 3) & ~3)
        if end > len(seg):
            break
        yield seg[name_at:name_at + namesz].rstrip(b"\0"), ntype, seg[desc_at:desc_at + descsz]
        off = end


def threads(note_seg, machine):
    """Per thread: dict of pc, lr, sp, fp, x0-x3, and gcspr/features if any,
    from arm64's or riscv64's notes."""
    out = []
    for name, ntype, desc in notes(note_seg):
        if name == b"CORE" and ntype == NT_PRSTATUS and machine == EM_RISCV \
                and len(desc) >= 112 + 32 * 8:
            r = struct.unpack_from("<32Q", desc, 112)    # pc, then x1..x31
            out.append({"pc": r[0], "lr": r[1], "sp": r[2], "fp": r[8], "x": r[10:14],
                        "gcspr": 0, "features": 0})
        elif name == b"CORE" and ntype == NT_PRSTATUS and len(desc) >= 112 + 34 * 8:
            r = struct.unpack_from("<34Q", desc, 112)
            out.append({"pc": r[32], "lr": r[30], "sp": r[31], "fp": r[29], "x": r[0:4],
                        "gcspr": 0, "features": 0})
        elif name == b"LINUX" and ntype == NT_ARM_GCS and len(desc) >= 24 and out:
            out[-1]["features"], _, out[-1]["gcspr"] = struct.unpack_from("<3Q", desc, 0)
        elif name == b"LINUX" and ntype == NT_RISCV_USER_CFI and len(desc) >= 16 and out:
            out[-1]["features"], out[-1]["gcspr"] = struct.unpack_from("<2Q", desc, 0)
    return out


class Core:
    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        self.ph = phdrs(self.data)
        self.machine, = struct.unpack_from("<H", self.data, 18)
        note = [p for p in self.ph if p[0] == PT_NOTE]
        if not note:
            raise ValueError(path + ": no PT_NOTE")
        self.notes = self.data[note[0][2]:note[0][2] + note[0][5]]
        self.loads = [p for p in self.ph if p[0] == PT_LOAD]
        self.threads = threads(self.notes, self.machine)

    def window(self, addr, keep):
        """(vaddr, bytes) from the page of ADDR, at most KEEP bytes, or None."""
        start = addr & ~(PAGE - 1)
        for _, _, off, vaddr, _, filesz, _, _ in self.loads:
            if vaddr <= start < vaddr + filesz:
                n = min(keep, vaddr + filesz - start)
                at = off + start - vaddr
                return start, self.data[at:at + n]
        return None


def elf_core(note_seg, segs, machine):
    """A core file of MACHINE: ELF header, PT_NOTE, PT_LOADs for SEGS
    [(vaddr, bytes)]."""
    phnum = 1 + len(segs)
    off = 64 + 56 * phnum
    eh = (b"\x7fELF\x02\x01\x01" + b"\0" * 9 +
          struct.pack("<HHIQQQIHHHHHH", 4, machine, 1, 0, 64, 0, 0, 64, 56, phnum, 0, 0, 0))
    ph = [struct.pack("<IIQQQQQQ", PT_NOTE, 0, off, 0, 0, len(note_seg), 0, 4)]
    body = [note_seg]
    off += len(note_seg)
    for vaddr, data in segs:
        pad = (-off) % 8
        body.append(b"\0" * pad)
        off += pad
        ph.append(struct.pack("<IIQQQQQQ", PT_LOAD, 6, off, vaddr, 0, len(data), len(data), PAGE))
        body.append(data)
        off += len(data)
    return eh + b"".join(ph) + b"".join(body)


def merge(windows):
    """Windows [(vaddr, bytes)] without overlaps (the earlier one wins)."""
    out = []
    for vaddr, data in sorted(windows):
        if out and vaddr < out[-1][0] + len(out[-1][1]):
            prev_v, prev_d = out[-1]
            end = max(prev_v + len(prev_d), vaddr + len(data))
            tail = data[prev_v + len(prev_d) - vaddr:] if vaddr + len(data) > prev_v + len(prev_d) else b""
            out[-1] = (prev_v, prev_d + tail)
            assert prev_v + len(out[-1][1]) == end
        else:
            out.append((vaddr, data))
    return out


def write(out, harness, name, data):
    os.makedirs(os.path.join(out, harness), exist_ok=True)
    with open(os.path.join(out, harness, name), "wb") as f:
        f.write(data)


def core_seeds(out, path):
    c = Core(path)
    base = os.path.basename(path).replace(".core", "")
    write(out, "core", base + ".core", c.data)
    write(out, "core-notes", "small-" + base + ".notes", c.notes)
    windows = []
    for i, t in enumerate(c.threads):
        stack = c.window(t["sp"], STACK_KEEP)
        gcs = c.window(t["gcspr"], GCS_KEEP) if t["gcspr"] else None
        windows += [w for w in (stack, gcs) if w]
        if i < 4 and c.machine == EM_AARCH64:
            sdata = stack[1] if stack else b""
            gdata = gcs[1] if gcs else b""
            head = struct.pack("<11Q", t["pc"], t["lr"], t["sp"], t["fp"], t["gcspr"],
                               t["features"], len(sdata), *t["x"])
            write(out, "core-memory", "small-%s-thread%d" % (base, i), head + sdata + gdata)
    write(out, "core", "small-" + base + ".core", elf_core(c.notes, merge(windows), c.machine))


def profile_seeds(out, path, keep=40):
    with open(path, "rb") as f:
        data = f.read()
    name = os.path.basename(os.path.dirname(path)) if path.endswith("/profile") else os.path.basename(path)
    write(out, "profile", name, data)
    # Version 2 is written gzip: the shrunk copy is its text (the reader
    # takes both), so that the fuzzer mutates lines, not deflate's bits.
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    lines = data.split(b"\n")
    v2 = lines[0] == b"gcsprof-profile 2"
    kept, samples, mappings, stacks = [], 0, 0, 0
    for line in lines:
        if line.startswith(b"end "):
            continue
        if line.startswith(b"sample "):
            if samples >= keep:
                continue
            samples += 1
        if line.startswith(b"mapping "):
            mappings += 1
        if line.startswith(b"stack "):
            stacks += 1
        if line:
            kept.append(line)
    end = [ln for ln in lines if ln.startswith(b"end ")]
    duration = end[0].split()[1] if end else b"1000000"
    kept.append(b"end %s %d %d" % (duration, samples, mappings) + (b" %d" % stacks if v2 else b""))
    write(out, "profile", "small-" + name, b"\n".join(kept) + b"\n")


def elf_seeds(out, path):
    with open(path, "rb") as f:
        data = bytearray(f.read())
    ph = phdrs(data)
    end = max([64 + 56 * len(ph)] + [p[2] + p[5] for p in ph if p[0] == PT_NOTE])
    small = data[:end]
    struct.pack_into("<Q", small, 40, 0)           # e_shoff
    struct.pack_into("<HHH", small, 58, 0, 0, 0)   # e_shentsize, e_shnum, e_shstrndx
    write(out, "build-id", "small-" + os.path.basename(path), bytes(small))


# The proc harness's selector byte for each file proc-capture.sh writes.
PROC_KEYS = {"maps": b"m", "smaps": b"s", "stat": b"t", "status": b"S"}


def proc_seeds(out, folder):
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as f:
            data = f.read()
        if name == "task":
            # One entry per seed: the parser reads one folder name.
            for tid in data.split():
                write(out, "proc", "guest-task-" + tid.decode(), b"d" + tid)
            continue
        key = PROC_KEYS.get(name.split("-")[-1])
        if key:
            write(out, "proc", "guest-" + name, key + data)
        if name == "smaps":
            # The flag check alone: "ss" and a GCS mapping's VmFlags.
            flags = [ln[8:] for ln in data.split(b"\n") if ln.startswith(b"VmFlags:")]
            gcs = [f for f in flags if b" ss" in f]
            if gcs:
                write(out, "proc", "guest-vmflags", b"fss\n" + gcs[0].strip())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--profile", action="append", default=[])
    ap.add_argument("--elf", action="append", default=[])
    ap.add_argument("--proc")
    ap.add_argument("cores", nargs="*")
    a = ap.parse_intermixed_args()
    try:
        for p in a.cores:
            core_seeds(a.out, p)
        for p in a.profile:
            profile_seeds(a.out, p)
        for p in a.elf:
            elf_seeds(a.out, p)
        if a.proc:
            proc_seeds(a.out, a.proc)
    except (OSError, ValueError, struct.error) as e:
        print("seeds.py: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
