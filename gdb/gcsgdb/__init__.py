# SPDX-License-Identifier: MIT
"""gcsgdb: GDB commands on libgcswalk (arm64 Guarded Control Stack).

Loaded by gcs.py, the one file a user sources. The modules, each with one
job:
  library   the ctypes binding of libgcswalk's public C API, and finding it
  inferior  what GDB knows of a thread: registers, GCS state, memory
  walk      a GCS walk through libgcswalk's caller-supplied source
  switch    following a GCS switch back to the GCS the thread left
  symbols   addresses named by GDB (functions, inline frames, lines)
  chain     the chain as text, recursion folded (as gcsprof inspect shows it)
  verify    GDB's own unwind against the GCS
  commands  the gcs prefix command and its sub-commands
"""
