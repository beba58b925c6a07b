#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""speedscope-check FILE: check a speedscope JSON file against the file
format's schema (speedscope's src/lib/file-format-spec.ts, from which
https://www.speedscope.app/file-format-schema.json is generated: the same
required fields, types and enums, written out here), and against what its
importer assumes (samples and weights of the same length, frame indexes in
range, endValue not before startValue). Then print, per profile, "profile
NAME SAMPLES" and the heaviest leaf frames "leaf WEIGHT NAME", most first.
Exit 1 with the reasons if the file does not fit."""
import sys

from jsonshape import errors, load, refuse

UNITS = ["none", "nanoseconds", "microseconds", "milliseconds", "seconds", "bytes"]

FRAME = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string"},
        "file": {"type": "string"},
        "line": {"type": "number"},
        "col": {"type": "number"},
    },
}

COMMON = {
    "name": {"type": "string"},
    "unit": {"enum": UNITS},
    "startValue": {"type": "number"},
    "endValue": {"type": "number"},
}

SAMPLED = {
    "type": "object",
    "required": ["type", "name", "unit", "startValue", "endValue", "samples", "weights"],
    "properties": dict(COMMON, **{
        "type": {"const": "sampled"},
        "samples": {"type": "array",
                    "items": {"type": "array", "items": {"type": "integer", "minimum": 0}}},
        "weights": {"type": "array", "items": {"type": "number"}},
    }),
}

EVENT = {
    "type": "object",
    "required": ["type", "at", "frame"],
    "properties": {
        "type": {"enum": ["O", "C"]},
        "at": {"type": "number"},
        "frame": {"type": "integer", "minimum": 0},
    },
}

EVENTED = {
    "type": "object",
    "required": ["type", "name", "unit", "startValue", "endValue", "events"],
    "properties": dict(COMMON, **{
        "type": {"const": "evented"},
        "events": {"type": "array", "items": EVENT},
    }),
}

FILE = {
    "type": "object",
    "required": ["$schema", "shared", "profiles"],
    "properties": {
        "$schema": {"const": "https://www.speedscope.app/file-format-schema.json"},
        "shared": {"type": "object", "required": ["frames"],
                   "properties": {"frames": {"type": "array", "items": FRAME}}},
        "profiles": {"type": "array", "items": {"oneOf": [SAMPLED, EVENTED]}},
        "name": {"type": "string"},
        "activeProfileIndex": {"type": "number"},
        "exporter": {"type": "string"},
    },
}


def main(argv):
    doc = load(argv, "speedscope-check")
    bad = errors(doc, FILE)
    if not bad:
        nframes = len(doc["shared"]["frames"])
        for i, p in enumerate(doc["profiles"]):
            where = "$.profiles[%d]" % i
            if p["endValue"] < p["startValue"]:
                bad.append(where + ": endValue before startValue")
            if p["type"] == "sampled":
                if len(p["samples"]) != len(p["weights"]):
                    bad.append(where + ": samples and weights differ in length")
                if any(x >= nframes for s in p["samples"] for x in s):
                    bad.append(where + ": a frame index beyond shared.frames")
        if doc.get("activeProfileIndex", 0) >= max(1, len(doc["profiles"])):
            bad.append("$.activeProfileIndex: beyond the profiles")
    if refuse("speedscope-check", bad):
        return 1
    frames = doc["shared"]["frames"]
    for p in doc["profiles"]:
        print("profile %s %d" % (p["name"], len(p.get("samples", []))))
        leaves = {}
        for s, w in zip(p.get("samples", []), p.get("weights", [])):
            if s:
                name = frames[s[-1]]["name"]
                leaves[name] = leaves.get(name, 0) + w
        for name, w in sorted(leaves.items(), key=lambda kv: (-kv[1], kv[0])):
            print("leaf %d %s" % (w, name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
