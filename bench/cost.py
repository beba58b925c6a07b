#!/usr/bin/env python3
"""The figures of bench/run's cost half (bench/guest/cost.sh's raw lines):
cost-results.md (medians, spreads), cost-results.json (every repetition)
and SVG plots of instructions a sample against depth.

Usage: bench/cost.py -o DIR KERNEL=RAWFILE... [--host-info TEXT]

Under QEMU's instruction counting (clock|SHIFT) the guest's time is its
instructions, 2^SHIFT ns each, so every figure is in instructions; under
plain TCG (clock|-) the PMU counts none and only the time figures exist,
in us.
"""
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results import METHODS, arguments, die, fmt_spread, group, line_plot, number, workload_order, workload_title, write_results  # noqa: E402

COST_FIELDS = ["workload", "param", "method", "rep", "samples", "cpu_s", "work", "base",
               "tgt_u", "tgt_k", "base_u", "base_k", "rec_u", "rec_k", "rec_ns", "bytes"]
CHAIN_FIELDS = ["depth", "chain", "rep", "samples", "work", "tgt_u", "tgt_k", "bytes"]
CHAINS = [
    ("gcs", "GCS copy (perf callchain gcs sysctl 1)"),
    ("fp", "frame-record walk (sysctl 0)"),
    ("dwarf-8k", "DWARF stack copy, 8 KB"),
    ("dwarf-64k", "DWARF stack copy, 64 KB"),
]
DWARF_BYTES = {"dwarf-8k": 8192, "dwarf-64k": 65528}


def fields(line, names, path):
    """A raw line's fields by name, numbers made numbers ("-": None)."""
    f = line.split("|")[1:]
    if len(f) != len(names):
        die(f"{path}: a malformed line: {line}")
    row = dict(zip(names, f))
    for k in names:
        if k in ("workload", "param", "method", "chain"):
            continue
        row[k] = None if row[k] == "-" else number(row[k])
        if k in ("rep", "samples", "work") and row[k] is None:
            die(f"{path}: a malformed line: {line}")
    return row


def parse(kernel, text, path="raw"):
    run = {"kernel": kernel, "shift": None, "cost": [], "chain": [], "failures": []}
    for line in text.splitlines():
        kind = line.split("|", 1)[0]
        f = line.split("|")
        if kind == "info" and len(f) >= 8:
            run.update(uname=f[1], cpus=number(f[2]), hz=number(f[3]), seconds=number(f[4]),
                       repeat=number(f[5]), date=f[6], perf=f[7])
        elif kind == "clock" and len(f) == 2:
            run["shift"] = number(f[1]) if f[1] != "-" else None
            run["counted"] = True
        elif kind == "cost":
            run["cost"].append(fields(line, COST_FIELDS, path))
        elif kind == "chain":
            run["chain"].append(fields(line, CHAIN_FIELDS, path))
        elif kind == "fail" and len(f) >= 5:
            run["failures"].append({"workload": f[1], "param": f[2], "method": f[3],
                                    "why": "|".join(f[4:]).strip()})
    if "uname" not in run or "counted" not in run:
        die(f"{path}: no info and clock lines: the guest run did not start the cost half")
    return run


# Per-run figures. Under icount a guest ns is 2^-SHIFT instructions;
# under plain TCG the time figures stay times (us).
def time_unit(run):
    return "instructions" if run["shift"] is not None else "us"


def from_ns(run, ns):
    return ns / 2 ** run["shift"] if run["shift"] is not None else ns / 1000


def lost(run, r):
    """The target's progress lost a sample, against the unprofiled runs:
    the guest time the profiling took from it (on one vCPU, the kernel's
    sampling and the recorder alike)."""
    if not r["samples"] or not r["base"]:
        return None
    return from_ns(run, (1 - r["work"] / r["base"]) * r["cpu_s"] * 1e9 / r["samples"])


def lost_pmu(r):
    """The same from the PMU: user instructions the target did not get to
    execute in its fixed time (gzip is a fixed job: none)."""
    if r["workload"] == "gzip" or None in (r["tgt_u"], r["base_u"]) or not r["samples"]:
        return None
    return (r["base_u"] - r["tgt_u"]) / r["samples"]


def extra_k(r):
    """Kernel instructions the PMU saw in the target beyond its unprofiled
    run's, a sample (ptrace's stops; not the PMU's own overflow handler,
    during which the PMU is stopped)."""
    if None in (r["tgt_k"], r["base_k"]) or not r["samples"]:
        return None
    return (r["tgt_k"] - r["base_k"]) / r["samples"]


def recorder_total(run, r):
    """The recorder's own work in a run: its instructions, user and
    kernel, under icount; its CPU time (us) under plain TCG."""
    if run["shift"] is not None and None not in (r["rec_u"], r["rec_k"]):
        return r["rec_u"] + r["rec_k"]
    return r["rec_ns"] / 1000 if r["rec_ns"] is not None else None


def recorder(run, r):
    """The recorder's own work a sample, its start and end included."""
    t = recorder_total(run, r)
    return t / r["samples"] if t is not None and r["samples"] else None


def recorder_start(run, method, rep):
    """The recorder's start and end alone: its run on true(1) (the start
    workload) in the same repetition."""
    for r in run["cost"]:
        if r["workload"] == "start" and r["method"] == method and r["rep"] == rep:
            return recorder_total(run, r)
    return None


def recorder_marginal(run, r):
    """The recorder's own work a sample beyond its start and end: what a
    longer recording costs it a sample."""
    t, t0 = recorder_total(run, r), recorder_start(run, r["method"], r["rep"])
    if None in (t, t0) or not r["samples"]:
        return None
    return (t - t0) / r["samples"]


def per_byte(r):
    return r["bytes"] / r["samples"] if r["samples"] else None


FIGURES = [
    ("lost", "target's progress lost a sample", lost),
    ("lost_pmu", "target's user instructions lost a sample (PMU)", lambda run, r: lost_pmu(r)),
    ("extra_k", "target's extra kernel instructions a sample (PMU)", lambda run, r: extra_k(r)),
    ("recorder", "recorder's own work a sample", recorder),
    ("recorder_marginal", "of it, beyond its start and end", recorder_marginal),
    ("bytes", "bytes a sample", lambda run, r: per_byte(r)),
]


def chain_costs(run):
    """{(depth, chain): [kernel cost a sample, one a repetition]}: the
    target's kernel instructions (or, under plain TCG, its progress lost,
    in us) a sample beyond the run of the same repetition without chains."""
    by = {(r["depth"], r["chain"], r["rep"]): r for r in run["chain"]}
    out = {}
    for (d, c, rep), r in by.items():
        none = by.get((d, "none", rep))
        if c == "none" or not none or not r["samples"]:
            continue
        if run["shift"] is not None and None not in (r["tgt_k"], none["tgt_k"]):
            v = (r["tgt_k"] - none["tgt_k"]) / r["samples"]
        elif none["work"]:
            v = from_ns(run, (1 - r["work"] / none["work"]) * run["seconds"] * 1e9 / r["samples"])
        else:
            continue
        out.setdefault((d, c), []).append(v)
    return out


def spread(vals):
    """(median, lowest, highest, relative spread in %) of the numbers."""
    vals = [v for v in vals if v is not None]
    if not vals:
        return None
    m = statistics.median(vals)
    rel = 100.0 * (max(vals) - min(vals)) / abs(m) if m else (0.0 if max(vals) == min(vals) else float("inf"))
    return m, min(vals), max(vals), rel


def cell(s, digits=0):
    return "-" if s is None else fmt_spread(s[0], s[1], s[2], "", digits)


def start_table(run, out):
    """The recorders' start and end alone (on true(1))."""
    by = group([r for r in run["cost"] if r["workload"] == "start"], "method")
    if not by:
        return
    out.append(f"\n#### A recorder's start and end alone, on true(1) ({time_unit(run)})\n")
    out.append("| method | recorder's own work |")
    out.append("|---|---|")
    for m, label in METHODS:
        if (m,) in by:
            out.append(f"| {label} | {cell(spread([recorder_total(run, r) for r in by[(m,)]]))} |")


def cost_table(run, out):
    unit = time_unit(run)
    by = group([r for r in run["cost"] if r["workload"] != "start"], "workload", "param")
    start_table(run, out)
    for key in sorted(by, key=workload_order):
        out.append(f"\n#### {workload_title(*key)}: a sample costs ({unit}; bytes)\n")
        out.append("| method | samples | " + " | ".join(label for _, label, _ in FIGURES) + " |")
        out.append("|---" * (2 + len(FIGURES)) + "|")
        per_method = group(by[key], "method")
        for m, label in METHODS:
            rs = per_method.get((m,))
            if not rs:
                continue
            s = spread([r["samples"] for r in rs])
            cells = [cell(spread([fn(run, r) for r in rs])) for _, _, fn in FIGURES]
            out.append(f"| {label} | {cell(s)} | " + " | ".join(cells) + " |")
    said = set()
    for f in run["failures"]:
        if (f["workload"], f["method"], f["why"]) not in said:
            said.add((f["workload"], f["method"], f["why"]))
            out.append(f"\n- {f['workload']} {f['param']}, {f['method']}: failed: {f['why']}")
    return out


def limit_rate(costs):
    """Kernel instructions a byte of the DWARF 64 KB copy at the deepest
    depth measured (where the stack is deeper than the copy: at shallow
    depths the copy stops at the top of the stack), the rate at which the
    kernel copies user memory into a sample: the limit a chain of DEPTH
    frames can cost is DEPTH x 8 bytes at it."""
    deep = [d for d, c in costs if c == "dwarf-64k"]
    if not deep:
        return None
    return statistics.median(costs[(max(deep), "dwarf-64k")]) / DWARF_BYTES["dwarf-64k"]


def chain_table(run, out):
    costs = chain_costs(run)
    if not costs:
        return out
    unit = time_unit(run)
    rate = limit_rate(costs) if run["shift"] is not None else None
    out.append(f"\n#### The kernel's call-chain cost a sample ({unit}), bench-sampler on cpu-clock, "
               "bench-depth-fp\n")
    out.append("| depth | " + " | ".join(label for _, label in CHAINS)
               + " | limit: depth x 8 bytes copied |")
    out.append("|---" * (2 + len(CHAINS)) + "|")
    for d in sorted({d for d, _ in costs}):
        cells = [cell(spread(costs.get((d, c), []))) for c, _ in CHAINS]
        lim = f"{d * 8 * rate:.0f} ({d * 8} bytes)" if rate else f"({d * 8} bytes)"
        out.append(f"| {d} | " + " | ".join(cells) + f" | {lim} |")
    if rate:
        out.append(f"\nThe limit's rate: {rate:.3f} kernel instructions a byte, the DWARF 64 KB "
                   "copy's cost over its bytes at the deepest depth.")
    return out


def spread_table(run, out):
    """Each figure's relative spread over the repetitions ((highest -
    lowest) / median): the median and the largest over the rows."""
    out.append("\n#### Spread over the repetitions, (highest - lowest) / |median|\n")
    out.append("| figure | rows | median spread | largest spread |")
    out.append("|---|---|---|---|")
    rows = group([r for r in run["cost"] if r["workload"] != "start"], "workload", "param", "method")
    kinds = [(label, [spread([fn(run, r) for r in rs]) for rs in rows.values()])
             for _, label, fn in FIGURES]
    kinds.append(("kernel call-chain cost a sample", [spread(v) for v in chain_costs(run).values()]))
    for label, ss in kinds:
        rel = [s[3] for s in ss if s is not None]
        if rel:
            out.append(f"| {label} | {len(rel)} | {statistics.median(rel):.2f}% | {max(rel):.2f}% |")
    return out


def markdown(runs, host_info):
    out = ["# bench/ cost results", ""]
    if host_info:
        out += [host_info, ""]
    out.append("Medians over the repetitions; [lowest, highest] where they differ. "
               "bench/README.md says what each figure means.")
    for run in runs:
        clock = (f"icount shift={run['shift']} ({2 ** -run['shift']:g} instruction a guest ns)"
                 if run["shift"] is not None else "plain TCG (times, not instructions)")
        out.append(f"\n### {run['kernel']} kernel: Linux {run['uname']}, {run['cpus']} vCPU, {clock}, "
                   f"{run['hz']} Hz asked, {run['seconds']} s a run, {run['repeat']} repetitions, "
                   f"{run['date']}, perf {run.get('perf') or '?'}")
        spread_table(run, out)
        cost_table(run, out)
        chain_table(run, out)
    return "\n".join(out) + "\n"


def depth_series(run, fn):
    out = {}
    for (m, p), rs in group([r for r in run["cost"] if r["workload"] == "depth"], "method", "param").items():
        s = spread([fn(run, r) for r in rs])
        if s is not None:
            out.setdefault(m, []).append((int(p), max(s[0], 1e-3)))
    return {m: sorted(v) for m, v in out.items()}


def chain_series(run):
    out = {}
    for (d, c), v in chain_costs(run).items():
        out.setdefault(c, []).append((int(d), max(statistics.median(v), 1e-3)))
    rate = limit_rate(chain_costs(run)) if run["shift"] is not None else None
    if rate and out:
        out["limit"] = [(d, d * 8 * rate) for d in sorted({d for v in out.values() for d, _ in v})]
    return {c: sorted(v) for c, v in out.items()}


def plots(run, outdir):
    k = run["kernel"]
    unit = time_unit(run)
    jobs = [
        (f"{k}-cost-lost.svg", "Target progress lost a sample against depth",
         depth_series(run, lost), METHODS),
        (f"{k}-cost-recorder.svg", "Recorder work a sample against depth",
         depth_series(run, recorder), METHODS),
        (f"{k}-cost-chain.svg", "Kernel call-chain cost a sample against depth",
         chain_series(run), CHAINS + [("limit", "limit: depth x 8 bytes copied")]),
    ]
    made = []
    for name, title, data, labels in jobs:
        s = line_plot(os.path.join(outdir, name), title, "stack depth (frames, log 2)",
                      f"{unit} a sample (log)", data, logx=True, logy=True, labels=labels)
        if not s:
            continue
        try:
            subprocess.run(["gnuplot"], input=s, text=True, check=True)
        except (OSError, subprocess.CalledProcessError) as e:
            die(f"gnuplot failed ({e}): install gnuplot-nox (scripts/deps does)")
        os.unlink(os.path.join(outdir, name) + ".dat")
        made.append(name)
    return made


def parse_file(kernel, path):
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except OSError as e:
        die(f"{path}: {e.strerror}")
    return parse(kernel, text, path)


def main():
    a, runs = arguments(__doc__, parse_file)
    made = [p for run in runs for p in plots(run, a.outdir)]
    write_results(a.outdir, "cost-results", {"host": a.host_info, "runs": runs, "plots": made},
                  markdown(runs, a.host_info))

if __name__ == "__main__":
    main()
