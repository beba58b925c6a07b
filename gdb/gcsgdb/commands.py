# SPDX-License-Identifier: MIT
"""The `gcs` commands. Every failure reaches the user as one line
(gdb.GdbError): no Python traceback, whatever goes wrong."""
import gdb

from . import arch as A
from . import chain
from . import library as L
from . import verify as V
from .framefilter import GcsFrameFilter
from .library import GcsError
from .symbols import Symbolizer
from .walk import ALL_FRAMES, SourceTarget, ThreadState, walk_selected

_plugin_dir = None


def _guarded(body):
    """Run BODY; turn every error into one line for GDB."""
    try:
        return body()
    except GcsError as e:
        raise gdb.GdbError("gcs: %s" % e)
    except gdb.GdbError:
        raise
    except KeyboardInterrupt:
        raise
    except Exception as e:  # pylint: disable=broad-except
        text = str(e).strip().splitlines()
        raise gdb.GdbError("gcs: internal error: %s: %s (please report it)"
                           % (e.__class__.__name__, text[0] if text else ""))


def _library():
    path, _ = L.resolve(_library_param.value if _library_param else None, _plugin_dir)
    try:
        return L.load(path)
    except GcsError:
        raise
    except OSError as e:
        raise GcsError("cannot load libgcswalk (%s): %s" % (path, e))


class GcsPrefix(gdb.Command):
    """Commands on shadow stacks, through libgcswalk: arm64's Guarded Control
Stack (GCS) and riscv64's Zicfiss shadow stack, as the program's
architecture has (live processes and cores, in the guest's GDB or in
gdb-multiarch).

The shadow stack holds the return address of every active call: a call
chain that neither frame pointers nor unwind tables give, and that an
overwritten stack cannot change. (On riscv64 a function pushes its own
return address, so a leaf's caller, in ra, is shown from the CFI.)

  gcs backtrace [N] [-full]   the selected thread's chain from the GCS (alias: gcs bt)
  gcs verify                  GDB's own unwind against the GCS ($_gcs_verify)
  gcs status                  the thread's GCS state: features, GCSPR (ssp), depth, mapping
  set gcs library PATH        the libgcswalk shared library to use"""

    def __init__(self):
        super().__init__("gcs", gdb.COMMAND_STACK, gdb.COMPLETE_NONE, True)

    def invoke(self, arg, from_tty):
        gdb.execute("help gcs", from_tty)


def _parse_bt_args(arg):
    limit, full = 0, False
    for word in gdb.string_to_argv(arg):
        if word in ("-full", "-f", "full"):
            full = True
        elif word.isdigit() and int(word) > 0 and not limit:
            limit = int(word)
        else:
            raise GcsError("usage: gcs backtrace [N] [-full] (N: a positive number of frames; "
                           "not %r)" % word)
    return limit, full


class GcsBacktrace(gdb.Command):
    """Print the selected thread's call chain from its GCS (arm64) or Zicfiss
shadow stack (riscv64), newest first.

Usage: gcs backtrace [N] [-full]     (alias: gcs bt)

Frames come from the Guarded Control Stack, read by libgcswalk through GDB,
and are named by GDB: function+offset, file:line, inline frames under the
frame that holds them. A run of the same return address (recursion) is one
line that says how many frames it stands for and which numbers they take.
A signal delivered to the thread shows as a line of its own, the signal
trampoline and the interrupted PC as frames; a GCS switch likewise.

N shows the newest N frames only, and says how many more there are.
-full adds each frame's GCS slot address, its kind and its library.
`thread apply all gcs bt` prints every thread's chain."""

    def __init__(self, name="gcs backtrace"):
        super().__init__(name, gdb.COMMAND_STACK, gdb.COMPLETE_NONE)

    def invoke(self, arg, from_tty):
        _guarded(lambda: self._run(arg))

    @staticmethod
    def _run(arg):
        limit, full = _parse_bt_args(arg)
        lib = _library()
        state, frames, status = walk_selected(lib)
        n = len(chain.code_frames(frames))
        gdb.write("%s: %d frame%s from %s at 0x%016x (%s)\n" % (
            state.label, n, "" if n == 1 else "s", state.arch.stack, state.gcs[2],
            state.gcs_from))
        hint = "gcs bt %d" % limit if limit else "gcs bt N"
        for line in chain.lines(frames, Symbolizer(), limit, full, hint):
            gdb.write(line + "\n")
        if status == L.CUT:
            gdb.write("  ... the chain goes deeper than %d frames\n" % ALL_FRAMES)


class GcsVerify(gdb.Command):
    """Check GDB's own unwind of the selected thread against its GCS (arm64) or
Zicfiss shadow stack (riscv64).

Usage: gcs verify

Compares GDB's frames (as `bt` shows them, inline frames aside) with the
GCS's, frame by frame. Prints "agree", or the first frame where they part:
both addresses, the frame record whose saved return address is not on the
GCS, and what it means: the stack was overwritten from there, and GDB's
frames past it do not hold (`gcs bt` gives the true chain).

Sets $_gcs_verify: 0 when they agree, else the number of the first frame
where they part; -1 when there is no verdict (no GCS, no process)."""

    def __init__(self):
        super().__init__("gcs verify", gdb.COMMAND_STACK, gdb.COMPLETE_NONE)

    def invoke(self, arg, from_tty):
        gdb.set_convenience_variable("_gcs_verify", -1)
        _guarded(lambda: self._run(arg))

    @staticmethod
    def _run(arg):
        if arg.strip():
            raise GcsError("usage: gcs verify (no arguments)")
        value, text = V.run(_library(), Symbolizer())
        gdb.set_convenience_variable("_gcs_verify", value)
        for line in text:
            gdb.write(line + "\n")


def _features(bits, arch):
    names = [n for b, n in arch.modes if bits & b]
    known = 0
    for b, _ in arch.modes:
        known |= b
    if bits & ~known:
        names.append("0x%x" % (bits & ~known))
    return ", ".join(names) if names else "none"


class GcsStatus(gdb.Command):
    """Show the selected thread's GCS (arm64) or Zicfiss (riscv64) state.

Usage: gcs status

The features enabled and locked (arm64: enable, write, push; riscv64:
enable and Zicfilp's landing pads), GCSPR or ssp (the newest entry), the
depth of the chain, and the shadow stack's mapping; one line when it is
not enabled in the thread. On a core, or in a GDB that shows no GCS
registers, the state comes from the core's note (NT_ARM_GCS,
NT_RISCV_USER_CFI); for a live riscv64 thread from its regset."""

    def __init__(self):
        super().__init__("gcs status", gdb.COMMAND_STACK, gdb.COMPLETE_NONE)

    def invoke(self, arg, from_tty):
        _guarded(lambda: self._run(arg))

    @staticmethod
    def _run(arg):
        if arg.strip():
            raise GcsError("usage: gcs status (no arguments)")
        lib = _library()
        state = ThreadState(lib)
        if state.gcs is None:
            state.require_gcs()
        a = state.arch
        enabled, locked, gcspr = state.gcs
        if not enabled & L.GCS_ENABLE:
            # One line, as every command says it: there is no GCS to show.
            gdb.write("%s of %s (from %s): not enabled (features_enabled 0x%x, locked 0x%x: "
                      "%s): the thread runs without %s\n" % (
                          a.feature, state.label, state.gcs_from, enabled, locked,
                          _features(locked, a),
                          "a Guarded Control Stack" if a is A.ARM64 else "a shadow stack"))
            return
        yes = lambda bit: "yes" if enabled & bit else "no"
        out = ["%s of %s (from %s):" % (a.feature, state.label, state.gcs_from),
               "  enabled   %s (features_enabled 0x%x: %s)" % (yes(L.GCS_ENABLE), enabled,
                                                              _features(enabled, a)),
               "  locked    0x%x (%s)" % (locked, _features(locked, a))]
        out += ["  %-9s %s" % (name, yes(bit)) for bit, name in a.modes[1:][::-1]]
        out.append("  %-9s 0x%016x" % (a.pointer, gcspr))
        with SourceTarget(lib, state) as target:
            frames, _ = target.walk()
        returns = sum(1 for f in frames if f[0] in (L.FRAME_RETURN, L.FRAME_SIGRETURN))
        out.append("  depth     %d frames (%d return addresses on %s)"
                   % (len(chain.code_frames(frames)), returns, a.stack))
        mapping = state.region()
        if mapping:
            out.append("  mapping   0x%016x-0x%016x (%d KiB)" % (
                mapping[0], mapping[1], (mapping[1] - mapping[0]) // 1024))
        else:
            out.append("  mapping   not known to GDB")
        out.append("  library   %s (libgcswalk %s)" % (lib.path, lib.version()))
        for line in out:
            gdb.write(line + "\n")


class SetGcs(gdb.Command):
    """Settings of the gcs commands."""

    def __init__(self, verb):
        super().__init__("%s gcs" % verb, gdb.COMMAND_SUPPORT, gdb.COMPLETE_NONE, True)


class LibraryParameter(gdb.Parameter):
    """The libgcswalk shared library the gcs commands load.

Empty (the default): $GCSWALK_LIBRARY if set, else the library installed
with the plugin (found relative to the plugin's own file), else the dynamic
loader's search for the soname."""

    set_doc = "Set the libgcswalk shared library the gcs commands use."
    show_doc = "Show the libgcswalk shared library the gcs commands use."

    def __init__(self):
        super().__init__("gcs library", gdb.COMMAND_SUPPORT, gdb.PARAM_OPTIONAL_FILENAME)
        self.value = ""

    def get_set_string(self):
        return ""

    def get_show_string(self, svalue):
        path, where = L.resolve(svalue, _plugin_dir)
        return "libgcswalk: %s (%s)" % (path, where)


_library_param = None


def register(plugin_dir):
    global _plugin_dir, _library_param
    _plugin_dir = plugin_dir
    GcsPrefix()
    GcsBacktrace()
    try:
        gdb.execute("alias gcs bt = gcs backtrace", to_string=True)
    except gdb.error:
        GcsBacktrace("gcs bt")  # already defined (the plugin sourced again)
    GcsVerify()
    GcsStatus()
    SetGcs("set")
    SetGcs("show")
    _library_param = LibraryParameter()
    GcsFrameFilter(_library)
