#!/usr/bin/env python3
"""The figures of a bench/run: raw guest and host lines in, results.json
(every repetition), results.md (medians and spreads) and SVG plots (drawn
with gnuplot) out.

Usage: bench/results.py -o DIR KERNEL=RAWFILE... [--host-info TEXT]

The raw lines (bench/guest/profile.sh and postmortem.sh say what they
hold): info|..., prof|..., fail|..., pm|..., and note|TEXT (bench/run's
word on a half it skipped). An info line's architecture and event (its
9th and 10th fields) are arm64 and cycles:u when it has none.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

# The methods in the order the tables show them, with their labels.
METHODS = [
    ("gcsprof-perf", "gcsprof (perf method)"),
    ("gcsprof-perf-defer", "gcsprof (perf method, --defer)"),
    ("gcsprof-ptrace", "gcsprof (ptrace method)"),
    ("perf-fp", "perf --call-graph fp"),
    ("perf-fp-gcs", "perf --call-graph fp, GCS chains"),
    ("perf-dwarf-8k", "perf --call-graph dwarf (8 KB)"),
    ("perf-dwarf-64k", "perf --call-graph dwarf (64 KB)"),
    ("eu-stackprof", "eu-stackprof"),
]
LABEL = dict(METHODS)
# Each architecture's name of its shadow stack, in the labels.
FEATURE = {"arm64": "GCS", "riscv64": "Zicfiss"}


def label(run, method):
    """METHOD's label, its shadow stack named as RUN's architecture does."""
    text = LABEL.get(method, method)
    return text.replace("GCS", FEATURE.get(run.get("arch"), "GCS"))
WORKLOAD_LABEL = {
    "split": "split (3:1 between two paths)",
    "depth": "recursion, depth {}",
    "busy": "{} busy threads",
    "gzip": "gzip -9 (4 MB)",
}
PROF_FIELDS = ["workload", "param", "method", "rep", "samples", "cpu_s", "in_scope",
               "exact", "work", "base", "bytes", "post_ns"]
PM_FIELDS = ["where", "core", "tool", "rep", "time_ns", "frames", "correct", "total", "note"]


def die(msg):
    print("results: error: " + msg, file=sys.stderr)
    sys.exit(1)


def number(text):
    try:
        return float(text) if "." in text else int(text)
    except ValueError:
        return None


def parse(kernel, path):
    run = {"kernel": kernel, "profiling": [], "failures": [], "postmortem": [], "notes": []}
    try:
        lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    except OSError as e:
        die(f"{path}: {e.strerror}")
    for line in lines:
        f = line.split("|")
        if f[0] == "info" and len(f) >= 8:
            run.update(uname=f[1], cpus=number(f[2]), hz=number(f[3]), seconds=number(f[4]),
                       repeat=number(f[5]), date=f[6], perf=f[7],
                       arch=f[8] if len(f) > 8 and f[8] else "arm64",
                       event=f[9] if len(f) > 9 and f[9] else "cycles:u")
        elif f[0] == "note" and len(f) >= 2:
            run["notes"].append("|".join(f[1:]).strip())
        elif f[0] == "prof" and len(f) == 1 + len(PROF_FIELDS):
            row = dict(zip(PROF_FIELDS, f[1:]))
            for k in PROF_FIELDS[3:]:
                row[k] = number(row[k])
            if None in row.values():
                die(f"{path}: a malformed line: {line}")
            run["profiling"].append(row)
        elif f[0] == "fail" and len(f) >= 5:
            run["failures"].append({"workload": f[1], "param": f[2], "method": f[3],
                                    "why": "|".join(f[4:]).strip()})
        elif f[0] == "pm" and len(f) >= 1 + len(PM_FIELDS):
            row = dict(zip(PM_FIELDS, f[1:len(PM_FIELDS)] + ["|".join(f[len(PM_FIELDS):])]))
            for k in ("rep", "time_ns", "frames", "correct", "total"):
                row[k] = number(row[k])
            run["postmortem"].append(row)
    if "uname" not in run:
        die(f"{path}: no info line: the guest run did not start the benchmark")
    return run


# eu-stackprof has no rate option: it always asks for this one.
EU_STACKPROF_HZ = 1000


# Per-run figures.
def rate(r, hz):  # achieved share of the asked rate, %
    if r["method"] == "eu-stackprof":
        hz = EU_STACKPROF_HZ
    return 100.0 * r["samples"] / (r["cpu_s"] * hz) if r["cpu_s"] else 0.0


def exact(r):
    return 100.0 * r["exact"] / r["in_scope"] if r["in_scope"] else 0.0


def slowdown(r):
    return 100.0 * (1 - r["work"] / r["base"]) if r["base"] else 0.0


def per_sample(r, key):
    return r[key] / r["samples"] if r["samples"] else 0.0


def lost_us(r):  # target time lost per sample, us
    if not r["samples"] or not r["base"]:
        return 0.0
    return max(0.0, 1 - r["work"] / r["base"]) * r["cpu_s"] * 1e6 / r["samples"]


def group(rows, *keys):
    out = {}
    for r in rows:
        out.setdefault(tuple(r[k] for k in keys), []).append(r)
    return out


def med(rows, fn):
    vals = [fn(r) for r in rows]
    return statistics.median(vals), min(vals), max(vals)


def workload_title(w, p):
    return WORKLOAD_LABEL.get(w, w).format(p)


def workload_order(key):
    w, p = key
    order = {"split": 0, "depth": 1, "busy": 2, "gzip": 3}
    return (order.get(w, 9), int(p) if p.isdigit() else 0)


def fmt_spread(m, lo, hi, unit="", digits=0):
    f = f"{{:.{digits}f}}"
    if len({round(m, digits), round(lo, digits), round(hi, digits)}) == 1:
        return f.format(m) + unit
    return f"{f.format(m)}{unit} [{f.format(lo)}, {f.format(hi)}]"


def profiling_table(run, out):
    hz = run["hz"]
    by = group(run["profiling"], "workload", "param")
    fails = group(run["failures"], "workload", "param")
    for key in sorted(set(by) | set(fails), key=workload_order):
        rows = by.get(key, [])
        out.append(f"\n#### {workload_title(*key)}\n")
        out.append("| method | samples/s (of asked) | exact chains | target slowdown "
                   "| bytes/sample | post-processing us/sample |")
        out.append("|---|---|---|---|---|---|")
        per_method = group(rows, "method")
        for m, _ in METHODS:
            rs = per_method.get((m,))
            if not rs:
                continue
            r_med = med(rs, lambda r: r["samples"] / r["cpu_s"] if r["cpu_s"] else 0)
            a_med = med(rs, lambda r: rate(r, hz))
            e = med(rs, exact)
            s = med(rs, slowdown)
            b = statistics.median(per_sample(r, "bytes") for r in rs)
            pp = statistics.median(per_sample(r, "post_ns") / 1000 for r in rs)
            bound = "<= " if m == "eu-stackprof" else ""
            out.append(f"| {label(run, m)} | {r_med[0]:.0f} ({a_med[0]:.0f}%) [{r_med[1]:.0f}, {r_med[2]:.0f}] "
                       f"| {bound}{fmt_spread(*e, '%', 1)} | {fmt_spread(*s, '%', 1)} "
                       f"| {b:.0f} | {pp:.0f} |")
        said = set()
        for f in fails.get(key, []):
            why = f["why"] or "failed"
            if (f["method"], why) in said:
                continue  # the same reason in every repetition
            said.add((f["method"], why))
            if any(r["method"] == f["method"] for r in rows):
                why = f"failed in some repetitions: {why}"
            out.append(f"| {label(run, f['method'])} | - | - | - | - | - ({why}) |")
    return out


def postmortem_table(run, out):
    if not run["postmortem"]:
        return out
    out.append("\n#### Post-mortem: the same cores, every tool\n")
    out.append("| where | core | tool | time (ms) | frames shown | threads with the true chain | note |")
    out.append("|---|---|---|---|---|---|---|")
    by = group(run["postmortem"], "where", "core", "tool")
    for (where, core, tool), rs in by.items():
        t = med(rs, lambda r: r["time_ns"] / 1e6)
        last = rs[-1]
        out.append(f"| {where} | {core} | {tool} | {fmt_spread(*t)} | {last['frames']} "
                   f"| {last['correct']} of {last['total']} | {last['note'].strip() or '-'} |")
    return out


def markdown(runs, host_info):
    out = ["# bench/ results", ""]
    if host_info:
        out.append(host_info)
        out.append("")
    out.append("Medians over the repetitions; [lowest, highest] where they differ. "
               "Under QEMU TCG absolute times are distorted: compare the methods "
               "within one run. bench/README.md says what each figure means.")
    for run in runs:
        out.append(f"\n### {run['kernel']} kernel ({run['arch']}): Linux {run['uname']}, {run['cpus']} vCPUs, "
                   f"{run['hz']} Hz asked on {run['event']}, {run['seconds']} s a run, "
                   f"{run['repeat']} repetitions, {run['date']}, perf {run.get('perf') or '?'}")
        for note in run["notes"]:
            out.append(f"\n{note}.")
        profiling_table(run, out)
        postmortem_table(run, out)
    return "\n".join(out) + "\n"


# Plots: gnuplot, one SVG each, from the first run (the project kernel's
# when both ran).
GNUPLOT_HEAD = """set terminal svg size 820,520 dynamic enhanced font 'sans,12' background '#ffffff'
set output '{out}'
set title '{title}'
set xlabel '{xlabel}'
set ylabel '{ylabel}'
set key outside right top
set grid
"""


def series(run, workload, fn):
    """{method: [(param, median)]} for a workload's parameter series."""
    out = {}
    rows = [r for r in run["profiling"] if r["workload"] == workload]
    for (m, p), rs in group(rows, "method", "param").items():
        out.setdefault(m, []).append((int(p), statistics.median(fn(r) for r in rs)))
    return {m: sorted(v) for m, v in out.items()}


def line_plot(path, title, xlabel, ylabel, data, logx=False, logy=False, yrange=None, labels=METHODS):
    """A gnuplot script of DATA ({key: [(x, y)]}) drawn in the order and
    with the labels of LABELS ([(key, label)])."""
    methods = [(m, lbl) for m, lbl in labels if data.get(m)]
    if not methods:
        return None
    datafile = path + ".dat"
    with open(datafile, "w", encoding="utf-8") as f:
        for m, _ in methods:
            f.write(f"# {m}\n")
            for x, y in data[m]:
                f.write(f"{x} {y}\n")
            f.write("\n\n")
    script = GNUPLOT_HEAD.format(out=path, title=title, xlabel=xlabel, ylabel=ylabel)
    if logx:
        script += "set logscale x 2\n"
    xs = {x for m, _ in methods for x, _ in data[m]}
    if len(xs) == 1:  # one point (a --quick run): a range around it
        x = xs.pop()
        script += f"set xrange [{x / 2}:{x * 2}]\n"
    if logy:
        script += "set logscale y 10\n"
    if yrange:
        script += f"set yrange [{yrange}]\n"
    plots = [f"'{datafile}' index {i} using 1:2 with linespoints lw 2 title '{lbl}'"
             for i, (_, lbl) in enumerate(methods)]
    script += "plot " + ", \\\n     ".join(plots) + "\n"
    return script


def bar_plot(path, title, ylabel, bars):
    if not bars:
        return None
    datafile = path + ".dat"
    with open(datafile, "w", encoding="utf-8") as f:
        for i, (lbl, y) in enumerate(bars):
            f.write(f"{i} {y} \"{lbl}\"\n")
    script = GNUPLOT_HEAD.format(out=path, title=title, xlabel="", ylabel=ylabel)
    script += ("set style fill solid 0.7\nset boxwidth 0.6\nset logscale y 10\nunset key\n"
               "set xtics rotate by -30 left\nset bmargin 8\n"
               f"plot '{datafile}' using 1:2:xtic(3) with boxes, "
               f"'' using 1:2:(sprintf('%.0f', $2)) with labels offset 0,0.7 notitle\n")
    return script


def plots(run, outdir):
    hz = run["hz"]
    k = run["kernel"]
    made = []
    labels = [(m, label(run, m)) for m, _ in METHODS]
    jobs = [
        (f"{k}-depth-cost.svg", line_plot,
         ("Target time lost per sample against stack depth", "stack depth (frames, log 2)",
          "target time lost per sample (us, log)", series(run, "depth", lost_us)),
         {"logx": True, "logy": True, "labels": labels}),
        (f"{k}-depth-accuracy.svg", line_plot,
         ("Exact chains against stack depth", "stack depth (frames, log 2)",
          "samples with the true chain (%)", series(run, "depth", exact)),
         {"logx": True, "yrange": "-5:105", "labels": labels}),
        (f"{k}-threads-rate.svg", line_plot,
         (f"Achieved sampling rate against busy threads ({hz} Hz asked)", "busy threads (log 2)",
          "samples per CPU-second, % of the asked rate", series(run, "busy", lambda r: rate(r, hz))),
         {"logx": True, "yrange": "0:*", "labels": labels}),
    ]
    split = group([r for r in run["profiling"] if r["workload"] == "split"], "method")
    bars = [(lbl, statistics.median(per_sample(r, "bytes") for r in split[(m,)]))
            for m, lbl in labels if (m,) in split and m != "eu-stackprof"]
    scripts = []
    for name, fn, args, kw in jobs:
        s = fn(os.path.join(outdir, name), *args, **kw)
        if s:
            scripts.append(s)
            made.append(name)
    s = bar_plot(os.path.join(outdir, f"{k}-bytes.svg"),
                 "Bytes per sample on disk (split workload)", "bytes per sample (log)", bars)
    if s:
        scripts.append(s)
        made.append(f"{k}-bytes.svg")
    for s in scripts:
        try:
            subprocess.run(["gnuplot"], input=s, text=True, check=True)
        except (OSError, subprocess.CalledProcessError) as e:
            die(f"gnuplot failed ({e}): install gnuplot-nox (scripts/deps does)")
    for name in made:
        try:
            os.unlink(os.path.join(outdir, name) + ".dat")
        except OSError:
            pass
    return made


def arguments(doc, parse_run):
    """The command line's -o DIR, --host-info and KERNEL=RAWFILE runs,
    each parsed by PARSE_RUN(kernel, path); (args, runs)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("-o", dest="outdir", required=True)
    ap.add_argument("--host-info", default="")
    ap.add_argument("runs", nargs="+", metavar="KERNEL=RAWFILE")
    a = ap.parse_args()
    runs = []
    for spec in a.runs:
        kernel, sep, path = spec.partition("=")
        if not sep:
            die(f"{spec}: want KERNEL=RAWFILE")
        runs.append(parse_run(kernel, path))
    os.makedirs(a.outdir, exist_ok=True)
    return a, runs


def write_results(outdir, stem, result, md):
    """STEM.json (RESULT) and STEM.md (MD, with RESULT's plots) in OUTDIR;
    prints the markdown."""
    made = result["plots"]
    with open(os.path.join(outdir, stem + ".json"), "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
    if made:
        md += "\n### Plots\n\n" + "\n".join(f"![{n}]({n})" for n in made) + "\n"
    with open(os.path.join(outdir, stem + ".md"), "w", encoding="utf-8") as f:
        f.write(md)
    print(md)


def main():
    a, runs = arguments(__doc__, parse)
    made = [p for run in runs for p in plots(run, a.outdir)]
    write_results(a.outdir, "results", {"host": a.host_info, "methods": dict(METHODS), "runs": runs,
                                        "plots": made}, markdown(runs, a.host_info))


if __name__ == "__main__":
    main()
