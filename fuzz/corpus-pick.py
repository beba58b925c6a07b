#!/usr/bin/env python3
"""Pick the few inputs of a long fuzz run that add the most coverage to a
checked-in corpus.

    corpus-pick.py CONTROL DIR [--max-files N] [--max-size BYTES] [--copy]

CONTROL is the control file of a libFuzzer merge run with -use_counters=0
(so that an input's features are the edges it covers) whose first corpus
is a copy of the checked-in corpus DIR (fuzz/corpus/NAME), and whose other
corpora are the run's work folder:

    cp fuzz/corpus/NAME/* T/
    fuzz-NAME -merge=1 -use_counters=0 -merge_control_file=CONTROL T WORK/NAME

libFuzzer's own merge keeps every input that adds any feature: hundreds
of files after a million runs, each adding an edge or two. This picks
greedily, at each step the input that adds the most edges not yet covered
(the smaller of equals), until N inputs (default 24) or until none adds
an edge; inputs over BYTES (default 65536) are passed over, to keep the
checked-in corpora small. Prints what each pick adds; --copy copies the
picks into DIR under their names (libFuzzer's SHA-1 of the content).
"""

import argparse
import os
import shutil
import sys


def read_control(path):
    """(files, number of files of the first corpus, {index: set of features})."""
    with open(path) as f:
        lines = f.read().splitlines()
    n, first = int(lines[0]), int(lines[1])
    files = lines[2:2 + n]
    feats = {}
    for line in lines[2 + n:]:
        if line.startswith("FT "):
            parts = line.split()
            feats[int(parts[1])] = set(int(x) for x in parts[2:])
    return files, first, feats


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("control")
    ap.add_argument("dir")
    ap.add_argument("--max-files", type=int, default=24)
    ap.add_argument("--max-size", type=int, default=65536)
    ap.add_argument("--copy", action="store_true")
    a = ap.parse_args()
    try:
        files, first, feats = read_control(a.control)
    except (OSError, ValueError, IndexError) as e:
        print("corpus-pick.py: %s: %s" % (a.control, e), file=sys.stderr)
        return 1
    have = set()
    for i in range(first):
        have |= feats.get(i, set())
    base = len(have)
    cands = {i: feats[i] for i in feats
             if i >= first and os.path.getsize(files[i]) <= a.max_size}
    picks = []
    while len(picks) < a.max_files:
        best = max(cands, default=None,
                   key=lambda i: (len(cands[i] - have), -os.path.getsize(files[i])))
        if best is None or not cands[best] - have:
            break
        gain = len(cands[best] - have)
        have |= cands.pop(best)
        picks.append(best)
        print("+%d edges: %s (%d bytes)" % (gain, files[best], os.path.getsize(files[best])))
    print("%s: %d edges, %d with the picks (%d files, %d bytes); all inputs together: %d"
          % (a.dir, base, len(have), len(picks), sum(os.path.getsize(files[i]) for i in picks),
             len(set().union(*feats.values())) if feats else 0))
    if a.copy:
        for i in picks:
            shutil.copy(files[i], os.path.join(a.dir, os.path.basename(files[i])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
