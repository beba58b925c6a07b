# SPDX-License-Identifier: MIT
"""libgcswalk's public C API through ctypes.

ctypes rather than a compiled extension module: an extension is built
against one Python's headers and ABI, and the GDBs this plugin serves embed
different ones (the guest's GDB 18 and the host's gdb-multiarch 13 each
link their distribution's libpython). ctypes needs only the shared library,
which is built for the machine anyway, so the same .py files work in every
GDB with Python.

The structures and constants below mirror gcswalk.h field for field; the
test gdb.layout compares every one with the header as the compiler lays it
out (gdb/tests/host/layout-print.c), and the library checks the size
fields the caller sets. Only released layouts are here: 1.0 and later.
"""
import ctypes
import os

try:
    from . import paths as _paths
except ImportError:  # running from the source tree: no generated paths.py
    _paths = None

ENV_LIBRARY = "GCSWALK_LIBRARY"


class GcsError(Exception):
    """An error the user sees as one line."""


# Statuses and the frame kinds (enum gcswalk_status, gcswalk_frame_kind).
OK, END, CUT = 0, 1, 2
E_INVALID = -2
E_NO_GCS_CPU = -4
E_GCS_DISABLED = -5
E_IO = -12
E_NO_GCS_NOTE = -16

FRAME_PC = 1
FRAME_LR = 2
FRAME_RETURN = 3
FRAME_SIGRETURN = 4
FRAME_SIGNAL_CAP = 5
FRAME_SWITCH_CAP = 6
FRAME_TERMINATOR = 7
FRAME_UNREADABLE = 8
FRAME_INVALID = 9
FRAME_INTERRUPTED_PC = 10

GCS_ENABLE, GCS_WRITE, GCS_PUSH = 1, 2, 4
LANDING_PADS = 1 << 16          # riscv64's Zicfilp (1.2)
ATTACH_STOPPED = 1

RECORD_MATCHES, RECORD_UNCHECKED, RECORD_MISMATCH = 1, 2, 3
RECORD_OLDER_THAN_GCS, RECORD_OTHER_STACK, RECORD_BAD_LINK = 4, 5, 6
REGISTER_LR_MISMATCH, REGISTER_FP_NOT_RECORD = 7, 8

REGION_GCS = 1

u64 = ctypes.c_uint64
size_t = ctypes.c_size_t


class GcsState(ctypes.Structure):
    _fields_ = [("features_enabled", u64), ("features_locked", u64), ("gcspr", u64)]


class ThreadInfo(ctypes.Structure):
    _fields_ = [("tid", ctypes.c_int), ("name", ctypes.c_char_p),
                ("have_registers", ctypes.c_int),
                ("pc", u64), ("lr", u64), ("sp", u64), ("fp", u64),
                ("have_gcs", ctypes.c_int), ("gcs", GcsState)]


class SourceThread(ctypes.Structure):
    _fields_ = [("size", size_t), ("tid", ctypes.c_int), ("name", ctypes.c_char_p),
                ("have_registers", ctypes.c_int),
                ("pc", u64), ("lr", u64), ("sp", u64), ("fp", u64),
                ("have_gcs", ctypes.c_int), ("gcs", GcsState)]


class Mapping(ctypes.Structure):
    _fields_ = [("start", u64), ("end", u64), ("offset", u64), ("path", ctypes.c_char_p)]


READ_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, u64, ctypes.c_void_p, size_t,
                           ctypes.POINTER(size_t))


class Source(ctypes.Structure):
    _fields_ = [("size", size_t), ("pid", ctypes.c_int), ("read", READ_FN),
                ("data", ctypes.c_void_p),
                ("threads", ctypes.POINTER(SourceThread)), ("thread_count", size_t),
                ("mappings", ctypes.POINTER(Mapping)), ("mapping_count", size_t),
                # 1.2: the registers' ELF machine (0: arm64). A 1.1 library
                # takes the larger struct while this is 0.
                ("machine", ctypes.c_uint)]


class Frame(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("source", ctypes.c_int), ("address", u64),
                ("slot", u64)]


class RecordCheck(ctypes.Structure):
    _fields_ = [("record", u64), ("return_address", u64), ("verdict", ctypes.c_int),
                ("gcs_slot", u64)]


class Region(ctypes.Structure):
    _fields_ = [("size", size_t), ("kind", ctypes.c_int), ("start", u64), ("end", u64)]


class SignalInfo(ctypes.Structure):
    _fields_ = [("size", size_t), ("signo", ctypes.c_int), ("code", ctypes.c_int),
                ("error", ctypes.c_int), ("address", u64), ("tid", ctypes.c_int),
                ("thread_index", size_t)]


class WalkOptions(ctypes.Structure):
    _fields_ = [("size", size_t), ("method", ctypes.c_int), ("flags", ctypes.c_uint),
                ("max_frames", size_t), ("symbolizer", ctypes.c_void_p)]


P = ctypes.c_void_p
PP = ctypes.POINTER(ctypes.c_void_p)
ERRMSG = ctypes.POINTER(ctypes.c_void_p)

# name: (result type, argument types); the optional ones may be missing
# from an older library and are looked up when first used.
_PROTOTYPES = {
    "gcswalk_version": (ctypes.c_char_p, []),
    "gcswalk_strerror": (ctypes.c_char_p, [ctypes.c_int]),
    "gcswalk_frame_kind_name": (ctypes.c_char_p, [ctypes.c_int]),
    "gcswalk_target_open_source": (ctypes.c_int, [PP, ctypes.POINTER(Source), ERRMSG]),
    "gcswalk_target_open_core": (ctypes.c_int, [PP, ctypes.c_char_p, ERRMSG]),
    "gcswalk_target_close": (None, [P]),
    "gcswalk_target_errmsg": (ctypes.c_char_p, [P]),
    "gcswalk_target_thread_count": (size_t, [P]),
    "gcswalk_target_thread": (ctypes.c_int, [P, size_t, ctypes.POINTER(ThreadInfo)]),
    "gcswalk_target_thread_index": (ctypes.c_int, [P, ctypes.c_int]),
    "gcswalk_walk_begin": (ctypes.c_int, [PP, P, size_t, ctypes.c_void_p]),
    "gcswalk_walk_next": (ctypes.c_int, [P, ctypes.POINTER(Frame)]),
    "gcswalk_walk_free": (None, [P]),
    "gcswalk_verify": (ctypes.c_int, [P, size_t, ctypes.POINTER(RecordCheck), size_t,
                                      ctypes.POINTER(size_t)]),
}
_OPTIONAL = {
    "gcswalk_target_region_count": (size_t, [P]),
    "gcswalk_target_region": (ctypes.c_int, [P, size_t, ctypes.POINTER(Region)]),
    "gcswalk_target_fatal_signal": (ctypes.c_int, [P, ctypes.POINTER(SignalInfo)]),
    "gcswalk_target_open_pid": (ctypes.c_int, [PP, ctypes.c_int, ctypes.c_uint, ctypes.c_uint,
                                               ERRMSG]),
}


def _soname():
    return getattr(_paths, "LIBRARY_NAME", "libgcswalk.so.1")


def default_path(plugin_dir):
    """Where the library is expected: next to the plugin as installed."""
    rel = getattr(_paths, "LIBRARY_DIR", None)
    if rel is None:
        return None
    return os.path.normpath(os.path.join(plugin_dir, rel, _soname()))


class Library:
    """The loaded library, its functions typed."""

    def __init__(self, path):
        try:
            self.dll = ctypes.CDLL(path)
        except OSError as e:
            raise GcsError("cannot load libgcswalk from %s: %s" % (path, _first_line(e)))
        self.path = path
        for name, (res, args) in _PROTOTYPES.items():
            try:
                fn = getattr(self.dll, name)
            except AttributeError:
                raise GcsError("%s is not libgcswalk 1.0 or later: it has no %s()"
                               % (path, name))
            fn.restype, fn.argtypes = res, args
            # version() is the method below: the call is version_string.
            attr = name[len("gcswalk_"):]
            setattr(self, "version_string" if attr == "version" else attr, fn)
        for name, (res, args) in _OPTIONAL.items():
            fn = getattr(self.dll, name, None)
            if fn is not None:
                fn.restype, fn.argtypes = res, args
            setattr(self, "opt_" + name[len("gcswalk_"):], fn)
        libc = ctypes.CDLL(None)
        self._free = libc.free
        self._free.argtypes, self._free.restype = [ctypes.c_void_p], None

    def version(self):
        return self.version_string().decode()

    def strerror_of(self, status):
        return self.strerror(status).decode(errors="replace")

    def take_errmsg(self, msg):
        """The text of an ERRMSG out-parameter, freed."""
        if not msg.value:
            return ""
        text = ctypes.string_at(msg.value).decode(errors="replace")
        self._free(msg.value)
        return text

    def walk_options(self, max_frames):
        o = WalkOptions()
        o.size = ctypes.sizeof(o)
        o.method, o.flags, o.max_frames, o.symbolizer = 0, 0, max_frames, None
        return o


def _first_line(e):
    return str(e).splitlines()[0] if str(e) else e.__class__.__name__


_loaded = {}


def load(path):
    """The library at PATH, loaded once per path."""
    if path not in _loaded:
        if not os.path.exists(path) and os.sep in path:
            raise GcsError("no libgcswalk at %s (set gcs library PATH, or %s)"
                           % (path, ENV_LIBRARY))
        _loaded[path] = Library(path)
    return _loaded[path]


def resolve(setting, plugin_dir):
    """The path to load: `set gcs library`, else $GCSWALK_LIBRARY, else the
    library installed next to the plugin, else the dynamic loader's search
    for the soname. Returns (path, where it came from)."""
    if setting:
        return setting, "set gcs library"
    env = os.environ.get(ENV_LIBRARY)
    if env:
        return env, ENV_LIBRARY
    path = default_path(plugin_dir)
    if path and os.path.exists(path):
        return path, "next to the plugin"
    return _soname(), "the dynamic loader's search path"
