#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""firefox-check FILE: check a Firefox Profiler file in the Gecko profile
format (the profiler's src/types/gecko-profile.ts, version 31) for what the
profiler's importer needs: meta.version and the meta fields it reads, the
default grey category, and threads with their samples, stackTable,
frameTable and stringTable in the format's schema-and-rows layout, every
index in range, stacks whose prefixes come first, sample times in order.
Then do what the importer does with frame locations (one function per
distinct location, "NAME (in LIB)" giving the function NAME in library
LIB) and print, per thread, "thread NAME TID SAMPLES FIRST_MS LAST_MS" and
its heaviest leaf functions "leaf COUNT FUNCTION [LIB]", most first.
Exit 1 with the reasons if the file does not fit.

Why this and not the profiler's own importer: the Firefox Profiler is a
web application built from its repository (firefox-devtools/profiler) and
is not published as a package; the npm registry, the one reachable here,
has no firefox-profiler nor @firefox-devtools/profiler (both 404 when
looked up, 2026-12), only side packages (gecko-profiler-demangle,
@firefox-devtools/react-contextmenu). So its import code cannot be run
from a package here, and this check follows its types instead."""
import re
import sys

from jsonshape import errors, load, refuse

INDEX = {"type": "integer", "minimum": 0}
NUMBER = {"type": "number"}
MAYBE_INDEX = {"type": ["integer", "null"], "minimum": 0}
MAYBE_NUMBER = {"type": ["number", "null"]}


def table(schema_keys, row):
    """A Gecko table: {"schema": {column: position}, "data": [rows]}."""
    return {
        "type": "object",
        "required": ["schema", "data"],
        "properties": {
            "schema": {
                "type": "object",
                "required": list(schema_keys),
                "properties": {k: {"const": v} for k, v in schema_keys.items()},
            },
            "data": {"type": "array", "items": row},
        },
    }


SAMPLES = table({"stack": 0, "time": 1, "eventDelay": 2},
                {"type": "array", "items": [MAYBE_INDEX, NUMBER, MAYBE_NUMBER]})
FRAMES = table({"location": 0, "relevantForJS": 1, "innerWindowID": 2, "implementation": 3,
                "line": 4, "column": 5, "category": 6, "subcategory": 7},
               {"type": "array", "items": [INDEX, {"type": "boolean"}, MAYBE_NUMBER,
                                           MAYBE_INDEX, MAYBE_NUMBER, MAYBE_NUMBER,
                                           MAYBE_INDEX, MAYBE_INDEX]})
STACKS = table({"prefix": 0, "frame": 1}, {"type": "array", "items": [MAYBE_INDEX, INDEX]})
MARKERS = table({"name": 0, "startTime": 1, "endTime": 2, "phase": 3, "category": 4,
                 "data": 5}, {"type": "array"})

THREAD = {
    "type": "object",
    "required": ["name", "processType", "tid", "pid", "registerTime", "unregisterTime",
                 "markers", "samples", "frameTable", "stackTable", "stringTable"],
    "properties": {
        "name": {"type": "string"},
        "processType": {"type": "string"},
        "processName": {"type": "string"},
        "tid": {"type": "integer"},
        "pid": {"type": "integer"},
        "registerTime": NUMBER,
        "unregisterTime": MAYBE_NUMBER,
        "markers": MARKERS,
        "samples": SAMPLES,
        "frameTable": FRAMES,
        "stackTable": STACKS,
        "stringTable": {"type": "array", "items": {"type": "string"}},
    },
}

CATEGORY = {
    "type": "object",
    "required": ["name", "color", "subcategories"],
    "properties": {"name": {"type": "string"}, "color": {"type": "string"},
                   "subcategories": {"type": "array", "minItems": 1,
                                     "items": {"type": "string"}}},
}

PROFILE = {
    "type": "object",
    "required": ["meta", "libs", "threads", "pausedRanges", "processes"],
    "properties": {
        "meta": {
            "type": "object",
            "required": ["version", "startTime", "shutdownTime", "interval", "stackwalk",
                         "debug", "gcpoison", "asyncstack", "processType", "categories",
                         "markerSchema"],
            "properties": {
                "version": {"type": "integer", "minimum": 1},
                "startTime": NUMBER,
                "shutdownTime": MAYBE_NUMBER,
                "interval": NUMBER,
                "stackwalk": {"enum": [0, 1]},
                "debug": {"enum": [0, 1]},
                "gcpoison": {"enum": [0, 1]},
                "asyncstack": {"enum": [0, 1]},
                "processType": {"type": "integer"},
                "product": {"type": "string"},
                "presymbolicated": {"type": "boolean"},
                "profilingStartTime": NUMBER,
                "profilingEndTime": NUMBER,
                "categories": {"type": "array", "minItems": 1, "items": CATEGORY},
                "markerSchema": {"type": "array"},
            },
        },
        "libs": {"type": "array"},
        "threads": {"type": "array", "items": THREAD},
        "pausedRanges": {"type": "array"},
        "processes": {"type": "array"},
    },
}

CPP = re.compile(r"^(.*) \(in ([^)]*)\)$")


def thread_errors(t, i, categories, end):
    where = "$.threads[%d]" % i
    bad = []
    strings = t["stringTable"]
    frames = t["frameTable"]["data"]
    stacks = t["stackTable"]["data"]
    for j, f in enumerate(frames):
        if f[0] >= len(strings):
            bad.append("%s.frameTable[%d]: location beyond the stringTable" % (where, j))
        if f[6] is not None and (f[6] >= len(categories) or f[7] is None or
                                 f[7] >= len(categories[f[6]]["subcategories"])):
            bad.append("%s.frameTable[%d]: category or subcategory out of range" % (where, j))
    for j, (prefix, frame) in enumerate(stacks):
        if prefix is not None and prefix >= j:
            bad.append("%s.stackTable[%d]: prefix not before the stack" % (where, j))
        if frame >= len(frames):
            bad.append("%s.stackTable[%d]: frame beyond the frameTable" % (where, j))
    last = None
    for j, (stack, time, _) in enumerate(t["samples"]["data"]):
        if stack is not None and stack >= len(stacks):
            bad.append("%s.samples[%d]: stack beyond the stackTable" % (where, j))
        if last is not None and time < last:
            bad.append("%s.samples[%d]: time goes back" % (where, j))
        if time < 0 or (end is not None and time > end):
            bad.append("%s.samples[%d]: time %r outside the recording" % (where, j, time))
        last = time
    return bad


def main(argv):
    doc = load(argv, "firefox-check")
    bad = errors(doc, PROFILE)
    if not bad:
        meta = doc["meta"]
        cats = meta["categories"]
        if not any(c["color"] == "grey" for c in cats):
            bad.append("$.meta.categories: no grey (default) category")
        for i, t in enumerate(doc["threads"]):
            bad += thread_errors(t, i, cats, meta.get("profilingEndTime"))
    if refuse("firefox-check", bad):
        return 1
    for t in doc["threads"]:
        strings = t["stringTable"]
        frames = t["frameTable"]["data"]
        stacks = t["stackTable"]["data"]
        samples = t["samples"]["data"]
        times = [s[1] for s in samples]
        print("thread %s %d %d %.6f %.6f" % (t["name"], t["tid"], len(samples),
                                             min(times, default=0), max(times, default=0)))
        leaves = {}
        for stack, _, _ in samples:
            if stack is None:
                continue
            location = strings[frames[stacks[stack][1]][0]]
            m = CPP.match(location)
            func = "%s [%s]" % (m.group(1), m.group(2)) if m else location
            leaves[func] = leaves.get(func, 0) + 1
        for func, n in sorted(leaves.items(), key=lambda kv: (-kv[1], kv[0])):
            print("leaf %d %s" % (n, func))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
