# SPDX-License-Identifier: MIT
"""Addresses named by GDB itself: its symbol tables, its shared-library
list and its sysroot, so that `gcs bt` names frames as `bt` does.

A return address is looked up at address - 4 (the call instruction): after
a call to a function that does not return, the return address may already
be the next function's first instruction."""
import re

import gdb

_INFO_SYMBOL = re.compile(r"^(?P<name>.+?)(?: \+ (?P<off>\d+))? in section (?P<sec>\S+)"
                          r"(?: of (?P<obj>.*))?$")


class Level:
    """One source-level frame of an address: inline frames come first, the
    real function last (as gcswalk_symbolize() orders them)."""

    def __init__(self, function, offset=None, file=None, line=0, inlined=False):
        self.function, self.offset, self.file = function, offset, file
        self.line, self.inlined = line, inlined


class Location:
    def __init__(self, address, levels, module):
        self.address, self.levels, self.module = address, levels, module


def elf_symbol(address):
    """(name, offset) of the ELF symbol containing ADDRESS, or (None, None)."""
    try:
        text = gdb.execute("info symbol 0x%x" % address, to_string=True).strip()
    except gdb.error:
        return None, None
    match = _INFO_SYMBOL.match(text.splitlines()[0]) if text else None
    if not match:
        return None, None
    return match.group("name"), int(match.group("off") or 0)


def _function_blocks(address):
    """The blocks naming functions around ADDRESS, innermost first: the
    inline instances, then the function itself."""
    try:
        block = gdb.block_for_pc(address)
    except (RuntimeError, gdb.error):
        return []
    found = []
    while block is not None and not (block.is_static or block.is_global):
        if block.function is not None:
            found.append(block)
            sup = block.superblock
            if sup is None or sup.is_static or sup.is_global:
                break
        block = block.superblock
    return found


def _symtab_name(symtab):
    return symtab.filename if symtab is not None else None


def _module(address):
    try:
        name = gdb.current_progspace().solib_name(address)
    except (gdb.error, RuntimeError, ValueError):
        name = None
    if name:
        return name
    return None


class Symbolizer:
    """Names of addresses, cached for one command (recursion repeats them)."""

    def __init__(self):
        self._cache = {}

    def locate(self, address, is_return):
        key = (address, bool(is_return))
        if key not in self._cache:
            self._cache[key] = self._locate(address, is_return)
        return self._cache[key]

    def _locate(self, address, is_return):
        lookup = address - 4 if is_return and address >= 4 else address
        module = _module(lookup)
        elf_name, elf_off = elf_symbol(lookup)
        blocks = _function_blocks(lookup)
        try:
            sal = gdb.find_pc_line(lookup)
        except (gdb.error, RuntimeError):
            sal = None
        file = _symtab_name(sal.symtab) if sal is not None else None
        line = sal.line if sal is not None and file else 0
        levels = []
        for i, block in enumerate(blocks):
            fn = block.function
            inlined = i < len(blocks) - 1
            # The source line of the address belongs to the innermost level;
            # each outer level is where the level inside it was inlined.
            # GDB's symbol of an inline instance carries that call site
            # (DW_AT_call_file and DW_AT_call_line), as its `bt` shows it.
            if i == 0:
                lf, ll = file, line
            else:
                site = blocks[i - 1].function
                lf, ll = _symtab_name(site.symtab), site.line
            levels.append(Level(fn.print_name, None if inlined else elf_off, lf, ll, inlined))
        if not levels and (elf_name or file):
            levels.append(Level(elf_name or "??", elf_off, file, line))
        return Location(address, levels, module)

    def short_name(self, address, is_return):
        loc = self.locate(address, is_return)
        return loc.levels[-1].function if loc.levels else "??"


def describe(loc):
    """Text lines for a location, as gcsprof inspect prints them: the first
    starts with the address, inline levels under it."""
    if not loc.levels:
        where = " (%s)" % loc.module.rsplit("/", 1)[-1] if loc.module else ""
        return ["0x%016x ??%s" % (loc.address, where)]
    out = []
    for i, lv in enumerate(loc.levels):
        head = "0x%016x " % loc.address if i == 0 else " " * 19
        text = head + lv.function
        if not lv.inlined and lv.offset:
            text += "+0x%x" % lv.offset
        if lv.inlined:
            text += " [inlined]"
        if lv.file:
            text += " at %s" % lv.file
            if lv.line:
                text += ":%d" % lv.line
        out.append(text)
    return out
