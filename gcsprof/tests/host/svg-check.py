#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""svg-check FILE [--search TERM] [--node NODE]: check gcsprof's flame graph.
The file must parse as XML (xml.etree) with an <svg> root in the SVG
namespace, hold its script inline (CDATA, nothing loaded from elsewhere),
the controls the script uses (layout, search box, matched share, details
line, zoom reset), and frames (g.f) each with a title "NAME (N samples,
P%)", a rect as wide as its share and a label, every frame above the root
inside its parent's span. With --node, run the script under node in a
small DOM (svg-script-harness.js) and check what it does: hovering fills
the details line, clicking a frame zooms on it (full width, its callers
dimmed, other stacks hidden), searching TERM highlights the frames
holding it and shows the share they cover (computed here independently),
Escape clears, "Reset zoom" restores. Prints "frames N", "root N" and
"matched P%"; exit 1 with the reasons on any failure."""
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
TITLE = re.compile(r"^(.*) \((\d+) samples, [0-9.]+%\)$")
HIT = "rgb(230,0,230)"


def fail(why):
    print("svg-check: " + why, file=sys.stderr)
    sys.exit(1)


def as_dict(e):
    return {"tag": e.tag[len(NS):] if e.tag.startswith(NS) else e.tag,
            "attrs": dict(e.attrib), "text": e.text or "",
            "children": [as_dict(c) for c in e]}


def share(frames, term, total):
    """The samples covered by frames whose name holds TERM, nested once."""
    spans = sorted((f["s"], f["s"] + f["c"]) for f in frames
                   if term.lower() in f["name"].lower())
    covered, end = 0, -1
    for a, b in spans:
        if b > end:
            covered += b - max(a, end)
            end = b
    return covered


def run_script(node, root, script, frames, total, width, term):
    # Zoom on the widest frame at depth 1 that has frames above it.
    cands = [f for f in frames if f["d"] == 1 and any(g["d"] == 2 and f["s"] <= g["s"] < f["s"] + f["c"] for g in frames)]
    if not cands:
        fail("no frame to zoom on")
    z = max(cands, key=lambda f: f["c"])
    job = {"root": as_dict(root), "script": script, "zoom": {"s": z["s"], "d": z["d"]},
           "term": term}
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([node, os.path.join(here, "svg-script-harness.js")],
                       input=json.dumps(job), capture_output=True, text=True)
    if r.returncode != 0:
        fail("the script failed under node: " + r.stderr.strip().splitlines()[-1]
             if r.stderr.strip() else "the script failed under node")
    out = json.loads(r.stdout)
    if out["details"] != z["title"]:
        fail("hovering does not show the frame's details (%r)" % out["details"])
    for f in out["zoomed"]:
        inside = f["d"] >= z["d"] and z["s"] <= f["s"] and f["s"] + f["c"] <= z["s"] + z["c"]
        below = f["d"] < z["d"] and f["s"] <= z["s"] and f["s"] + f["c"] >= z["s"] + z["c"]
        if inside:
            want = f["c"] / z["c"] * width
            if f["display"] == "none" or abs(f["width"] - want) > 0.11:
                fail("zoomed: a frame above the zoomed one is %r wide, not %.1f" % (f["width"], want))
        elif below:
            if f["display"] == "none" or f["opacity"] != "0.5" or abs(f["width"] - width) > 0.11:
                fail("zoomed: a caller is not dimmed at full width")
        elif f["display"] != "none":
            fail("zoomed: a frame of another stack is still shown")
    if not out["reset_shown"]:
        fail("zoomed, but no 'Reset zoom'")
    covered = share(frames, term, total)
    want = "Matched: %.2f%% (%d of %d samples)" % (100.0 * covered / total, covered, total)
    if out["matched"] != want:
        fail("search %r: %r, not %r" % (term, out["matched"], want))
    for f, g in zip(out["searching"], frames):
        if (f["fill"] == HIT) != (term.lower() in g["name"].lower()):
            fail("search %r: %s highlighted wrongly" % (term, g["name"]))
    if term not in out["box"]:
        fail("the search box does not show the term")
    if out["cleared"] != "":
        fail("Escape does not clear the search")
    for f, g in zip(out["unzoomed"], frames):
        if f["display"] == "none" or abs(f["width"] - g["width"]) > 0.11 or f["fill"] == HIT:
            fail("'Reset zoom' does not restore the graph")
    if not out["reset_hidden"]:
        fail("'Reset zoom' still shown after resetting")
    print("matched %.2f%%" % (100.0 * covered / total))


def main(argv):
    args = argv[1:]
    term = node = None
    if "--search" in args:
        i = args.index("--search")
        term = args[i + 1]
        del args[i:i + 2]
    if "--node" in args:
        i = args.index("--node")
        node = args[i + 1]
        del args[i:i + 2]
    if len(args) != 1:
        print("usage: svg-check FILE [--search TERM] [--node NODE]", file=sys.stderr)
        return 64
    try:
        root = ET.parse(args[0]).getroot()
    except (OSError, ET.ParseError) as e:
        fail("not XML: %s" % e)
    if root.tag != NS + "svg":
        fail("the root is %s, not svg" % root.tag)
    scripts = root.findall(NS + "script")
    if len(scripts) != 1 or "href" in "".join(scripts[0].attrib) or not (scripts[0].text or "").strip():
        fail("not one inline script")
    script = scripts[0].text
    for word in ("addEventListener('click'", "addEventListener('mouseover'",
                 "addEventListener('keydown'"):
        if word not in script:
            fail("the script does not handle %s" % word)
    ids = {e.get("id"): e for e in root.iter() if e.get("id")}
    for need in ("layout", "details", "matched", "search-box", "search-text", "reset"):
        if need not in ids:
            fail("no element with id %s" % need)
    width = float(ids["layout"].get("data-width"))
    x0 = float(ids["layout"].get("data-x"))
    total = int(ids["layout"].get("data-total"))
    frames = []
    for g in root.iter(NS + "g"):
        if g.get("class") != "f":
            continue
        title, rect, text = g.find(NS + "title"), g.find(NS + "rect"), g.find(NS + "text")
        if title is None or rect is None or text is None:
            fail("a frame without its title, rect or label")
        m = TITLE.match(title.text or "")
        if not m:
            fail("a frame's title is %r" % title.text)
        f = {"name": m.group(1), "title": title.text, "s": int(g.get("data-s")),
             "c": int(g.get("data-c")), "d": int(g.get("data-d")),
             "x": float(rect.get("x")), "width": float(rect.get("width"))}
        if int(m.group(2)) != f["c"]:
            fail("%s: the title's count is not the frame's" % f["name"])
        if abs(f["width"] - width * f["c"] / total) > 0.11 or \
           abs(f["x"] - (x0 + width * f["s"] / total)) > 0.11:
            fail("%s: the rect is not where its share puts it" % f["name"])
        frames.append(f)
    roots = [f for f in frames if f["d"] == 0]
    if total and (len(roots) != 1 or roots[0]["c"] != total):
        fail("not one root holding every sample")
    for f in frames:
        if f["d"] and not any(p["d"] == f["d"] - 1 and p["s"] <= f["s"] and
                              f["s"] + f["c"] <= p["s"] + p["c"] for p in frames):
            fail("%s: outside its parent" % f["name"])
    print("frames %d" % len(frames))
    print("root %d" % total)
    if node and term is not None:
        run_script(node, root, script, frames, total, width, term)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
