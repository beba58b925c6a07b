# SPDX-License-Identifier: MIT
# The plugin's copy of gcswalk.h (gcsgdb/library.py: ctypes structures and
# constants) against the header as the compiler lays it out: every struct
# the plugin copies has the header's size and its fields, in order, at the
# header's offsets and sizes; every constant has the header's value; there
# is no layout the header does not have (none for an unreleased version).
# The chain printer's kinds (gcsgdb/chain.py: which frames are code, which
# hold return addresses) are the library's own answers,
# gcswalk_frame_is_code() and gcswalk_frame_is_return(). In GDB's Python
# (gdb -batch -x this file, after sourcing the plugin), with
# GCSGDB_LAYOUT_PRINTER (layout-print) and GCSWALK_LIBRARY set. TAP.
import ctypes
import os
import subprocess

import gdb  # noqa: F401 (the plugin's modules need GDB's Python)

from gcsgdb import chain
from gcsgdb import library as L

results = []


def check(desc, cond):
    results.append(cond)
    print("%s %d - %s" % ("ok" if cond else "not ok", len(results), desc))
    return cond


# The plugin's structures and the header's structs they copy.
STRUCTS = {
    "GcsState": "gcswalk_gcs_state",
    "ThreadInfo": "gcswalk_thread_info",
    "SourceThread": "gcswalk_source_thread",
    "Mapping": "gcswalk_mapping",
    "Source": "gcswalk_source",
    "Frame": "gcswalk_frame",
    "RecordCheck": "gcswalk_record_check",
    "Region": "gcswalk_region",
    "SignalInfo": "gcswalk_signal_info",
    "WalkOptions": "gcswalk_walk_options",
}


def header():
    """The printer's structs {name: (size, [(field, offset, size)])} and
    constants {name: value}."""
    out = subprocess.run([os.environ["GCSGDB_LAYOUT_PRINTER"]], check=True,
                         stdout=subprocess.PIPE, universal_newlines=True).stdout
    structs, consts = {}, {}
    for line in out.splitlines():
        w = line.split()
        if w[0] == "struct":
            structs[w[1]] = (int(w[2]), [])
        elif w[0] == "field":
            s, f = w[1].split(".")
            structs[s][1].append((f, int(w[2]), int(w[3])))
        elif w[0] == "const":
            consts[w[1]] = int(w[2])
    return structs, consts


def plugin_structs():
    return {n: c for n, c in vars(L).items()
            if isinstance(c, type) and issubclass(c, ctypes.Structure) and c.__module__ == L.__name__}


def check_struct(pyname, cls, structs):
    cname = STRUCTS.get(pyname)
    if not check("%s copies a struct of gcswalk.h (%s)" % (pyname, cname or "none"),
                 cname in structs):
        return
    size, fields = structs[cname]
    mine = [(f[0], getattr(cls, f[0]).offset, getattr(cls, f[0]).size) for f in cls._fields_]
    check("%s is %d bytes, as struct %s (%d)" % (pyname, ctypes.sizeof(cls), cname, size),
          ctypes.sizeof(cls) == size)
    if not check("%s has struct %s's fields, in order, at its offsets and sizes"
                 % (pyname, cname), mine == fields):
        print("# plugin: %s" % mine)
        print("# header: %s" % fields)


def check_constants(consts):
    mine = {n: v for n, v in vars(L).items()
            if n.isupper() and isinstance(v, int) and not isinstance(v, bool)}
    check("the plugin copies constants (%d)" % len(mine), len(mine) > 20)
    for n, v in sorted(mine.items()):
        want = consts.get("GCSWALK_" + n)
        check("%s = %d, as GCSWALK_%s (%s)" % (n, v, n, want), want == v)


def check_kinds(consts):
    lib = ctypes.CDLL(os.environ["GCSWALK_LIBRARY"])
    for fn in (lib.gcswalk_frame_is_code, lib.gcswalk_frame_is_return):
        fn.restype, fn.argtypes = ctypes.c_int, [ctypes.POINTER(L.Frame)]
    kinds = {v: n for n, v in consts.items() if n.startswith("GCSWALK_FRAME_")}
    for kind, name in sorted(kinds.items()):
        f = L.Frame(kind, 1, 0x1000, 0)
        check("%s: code in gcs bt (%s) as gcswalk_frame_is_code says" % (name, kind in chain.CODE),
              (kind in chain.CODE) == bool(lib.gcswalk_frame_is_code(ctypes.byref(f))))
        check("%s: a return address in gcs bt (%s) as gcswalk_frame_is_return says"
              % (name, kind in chain.RETURNS),
              (kind in chain.RETURNS) == bool(lib.gcswalk_frame_is_return(ctypes.byref(f))))


def main():
    structs, consts = header()
    mine = plugin_structs()
    check("the plugin copies structs (%d)" % len(mine), len(mine) >= len(STRUCTS))
    for pyname, cls in sorted(mine.items()):
        check_struct(pyname, cls, structs)
    check_constants(consts)
    check_kinds(consts)
    print("1..%d" % len(results))
    if not all(results):
        print("# %d of %d failed" % (results.count(False), len(results)))
        gdb.execute("quit 1")


main()
