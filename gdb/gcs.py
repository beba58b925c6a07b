# SPDX-License-Identifier: MIT
"""GDB commands on the arm64 Guarded Control Stack, through libgcswalk.

Load it with one line, in GDB or in ~/.gdbinit:

    source PREFIX/share/gcsprof/gdb/gcs.py

then `help gcs`. The commands live in the gcsgdb package next to this file;
libgcswalk is found relative to this file too (see `show gcs library`)."""
import os
import sys

import gdb


def _load():
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    try:
        from gcsgdb import commands
    except Exception as e:  # pylint: disable=broad-except
        raise gdb.GdbError("gcs: cannot load the plugin from %s: %s" % (here, e))
    commands.register(here)


_load()
