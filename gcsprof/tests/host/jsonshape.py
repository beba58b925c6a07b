# SPDX-License-Identifier: MIT
"""A small validator for the subset of JSON Schema that the format checkers
need: type (one or a list), enum, const, required, properties,
additionalProperties (false only), items (one schema, or a list for
tuples), minItems, minimum, and oneOf; and the checkers' loading and
refusing. Python 3 standard library only, so that host tests need nothing
from the network."""
import json
import sys

TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}


def errors(value, schema, path="$"):
    """Every way VALUE breaks SCHEMA, as "path: what" strings."""
    out = []
    if "oneOf" in schema:
        fits = [s for s in schema["oneOf"] if not errors(value, s, path)]
        if len(fits) != 1:
            first = errors(value, schema["oneOf"][0], path)
            out.append("%s: matches %d of the %d alternatives, not one (%s)"
                       % (path, len(fits), len(schema["oneOf"]),
                          first[0] if first else "-"))
        return out
    t = schema.get("type")
    if t is not None:
        kinds = t if isinstance(t, list) else [t]
        if not any(TYPES[k](value) for k in kinds):
            return ["%s: %r is not %s" % (path, value, " or ".join(kinds))]
    if "const" in schema and value != schema["const"]:
        out.append("%s: %r is not %r" % (path, value, schema["const"]))
    if "enum" in schema and value not in schema["enum"]:
        out.append("%s: %r is not one of %r" % (path, value, schema["enum"]))
    if "minimum" in schema and TYPES["number"](value) and value < schema["minimum"]:
        out.append("%s: %r is below %r" % (path, value, schema["minimum"]))
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                out.append("%s: no %r" % (path, key))
        props = schema.get("properties", {})
        for key, sub in props.items():
            if key in value:
                out += errors(value[key], sub, "%s.%s" % (path, key))
        if schema.get("additionalProperties") is False:
            for key in value:
                if key not in props:
                    out.append("%s: unexpected %r" % (path, key))
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            out.append("%s: fewer than %d items" % (path, schema["minItems"]))
        items = schema.get("items")
        if isinstance(items, list):
            if len(value) != len(items):
                out.append("%s: %d items, not %d" % (path, len(value), len(items)))
            for i, (v, s) in enumerate(zip(value, items)):
                out += errors(v, s, "%s[%d]" % (path, i))
        elif items is not None:
            for i, v in enumerate(value):
                out += errors(v, items, "%s[%d]" % (path, i))
                if len(out) > 20:
                    return out
    return out


def load(argv, name):
    """The JSON document named by ARGV (the checker's sys.argv): exits 64
    for a wrong command line, 1 if the file is not JSON."""
    if len(argv) != 2:
        print("usage: %s FILE" % name, file=sys.stderr)
        sys.exit(64)
    try:
        with open(argv[1], encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print("%s: not JSON: %s" % (name, e), file=sys.stderr)
        sys.exit(1)


def refuse(name, bad):
    """Print the first reasons in BAD; 1 if there are any, else 0."""
    for e in bad[:20]:
        print("%s: %s" % (name, e), file=sys.stderr)
    return 1 if bad else 0
