#!/usr/bin/env python3
"""The cost half's plumbing, on the host (no guest, no timing asserted):
vm/run --icount puts QEMU's instruction counting on its command line (and
nothing of it without), bench/run --icount hands it to vm/run with one
vCPU (a copy of bench/run in a scratch tree whose vm/run is a stand-in
that prints a recorded guest output), and bench/cost.py's figures from
that recorded output are the arithmetic of its lines. TAP on stdout.

Usage: cost-test.py"""
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
SAMPLE = os.path.join(HERE, "cost-sample.txt")
sys.path.insert(0, os.path.join(TOP, "bench"))
import cost  # noqa: E402
sys.path.insert(0, HERE)
from scratch import Tap, scratch_tree  # noqa: E402

TAP = Tap()
check = TAP.check


def load_vm_run():
    path = os.path.join(TOP, "vm", "run")
    loader = importlib.machinery.SourceFileLoader("vm_run", path)
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader("vm_run", loader))
    loader.exec_module(module)
    return module


def qemu_line(vm, argv):
    args = vm.parse_args(argv + ["--", "true"])
    return vm.qemu_command("/q", None, "/k", "/i", args)


def vm_run_cases():
    vm = load_vm_run()
    line = qemu_line(vm, ["--icount", "3"])
    check(line[line.index("-icount") + 1] == "shift=3,sleep=off" if "-icount" in line else False,
          "vm/run --icount 3: -icount shift=3,sleep=off")
    check("-accel" in line and line[line.index("-accel") + 1] == "tcg,thread=single",
          "vm/run --icount: one vCPU thread (-accel tcg,thread=single)")
    check("gcsprof.icount=3" in line[line.index("-append") + 1].split(),
          "vm/run --icount 3 tells the guest (gcsprof.icount=3)")
    check("dtb-randomness=off" in line[line.index("-machine") + 1],
          "vm/run --icount: no random seed from the board")
    line = qemu_line(vm, ["--icount"])
    check("shift=0,sleep=off" in line, "vm/run --icount alone: shift 0")
    line = qemu_line(vm, [])
    check("-icount" not in line and "-accel" not in line and "gcsprof.icount" not in " ".join(line)
          and "dtb-randomness" not in " ".join(line),
          "without --icount, no instruction counting")
    try:
        with open(os.devnull, "w") as null:
            old, sys.stderr = sys.stderr, null
            try:
                vm.parse_args(["--icount", "11", "--", "true"])
            finally:
                sys.stderr = old
        check(False, "vm/run --icount 11 is refused")
    except SystemExit as e:
        check(e.code == 2, "vm/run --icount 11 is refused")


def bench_run_case():
    with tempfile.TemporaryDirectory() as tmp:
        scratch_tree(tmp, SAMPLE, os.path.join("build", "arm64", "stage", "bench", "bench-depth-fp"))
        out = os.path.join(tmp, "out")
        p = subprocess.run([os.path.join(tmp, "bench", "run"), "--icount", "2", "--kernel", "project",
                            "--repeat", "1", "-o", out], capture_output=True, text=True)
        if not check(p.returncode == 0, f"bench/run --icount 2 with a stand-in vm/run (status {p.returncode})"):
            print("# " + p.stderr.replace("\n", "\n# "))
            return
        args = open(os.path.join(tmp, "vm-run.args")).read().split()
        check("--icount" in args and args[args.index("--icount") + 1] == "2",
              "bench/run --icount 2 passes --icount 2 to vm/run")
        check("--smp" in args and args[args.index("--smp") + 1] == "1", "the cost half runs on one vCPU")
        check("/opt/gcsprof/bench/cost.sh" in args, "the guest runs bench/guest/cost.sh")
        md = open(os.path.join(out, "cost-results.md")).read()
        check("| 2000 | 69300 | 151205 | 3042 | 19750 |" in md,
              "cost-results.md has the kernel's chain costs at depth 2000")


def parser_cases():
    run = cost.parse("project", open(SAMPLE).read(), SAMPLE)
    check(run["shift"] == 0 and run["hz"] == 499, "the clock and info lines")
    check(len(run["cost"]) == 21 and len(run["chain"]) == 5 and len(run["failures"]) == 1,
          f"21 cost, 5 chain and 1 fail line ({len(run['cost'])}, {len(run['chain'])}, "
          f"{len(run['failures'])})")
    costs = cost.chain_costs(run)
    # chain|2000|gcs: (38355835 - 3151500) / 508; fp: (79510071 - 3151500) / 505.
    check(round(costs[(2000, "gcs")][0], 3) == round((38355835 - 3151500) / 508, 3),
          "GCS chain: its kernel instructions beyond the run without chains, a sample")
    check(round(costs[(2000, "fp")][0], 3) == round((79510071 - 3151500) / 505, 3),
          "frame-record walk, the same")
    check(abs(cost.limit_rate(costs) - (13184510 - 3151500) / 508 / 65528) < 1e-9,
          "the limit's rate: the 64 KB copy's instructions a byte")
    r = next(r for r in run["cost"] if r["workload"] == "split" and r["method"] == "gcsprof-perf")
    check(cost.lost_pmu(r) == (r["base_u"] - r["tgt_u"]) / r["samples"], "PMU loss: base minus sampled, a sample")
    check(abs(cost.lost(run, r) - (1 - r["work"] / r["base"]) * r["cpu_s"] * 1e9 / r["samples"]) < 1e-6,
          "progress loss under shift 0: a guest ns an instruction")
    start = next(s for s in run["cost"] if s["workload"] == "start" and s["method"] == "gcsprof-perf"
                 and s["rep"] == r["rep"])
    want = (r["rec_u"] + r["rec_k"] - start["rec_u"] - start["rec_k"]) / r["samples"]
    check(cost.recorder_marginal(run, r) == want, "the recorder's work beyond its start and end, a sample")
    s = cost.spread([10, 12, 11])
    check(s == (11, 10, 12, 100 * 2 / 11), "spread: median, lowest, highest, relative")
    tcg = cost.parse("project", open(SAMPLE).read().replace("clock|0", "clock|-"), SAMPLE)
    t = next(t for t in tcg["cost"] if t["workload"] == "split" and t["method"] == "gcsprof-perf")
    check(cost.time_unit(tcg) == "us" and abs(cost.lost(tcg, t) - cost.lost(run, r) / 1000) < 1e-9,
          "plain TCG (clock|-): the figures are times, in us")
    try:
        with open(os.devnull, "w") as null:
            old, sys.stderr = sys.stderr, null
            try:
                cost.parse("project", "info|x|1|499|1|1|d|p\nclock|0\ncost|split|-|m|1\n", "bad")
            finally:
                sys.stderr = old
        check(False, "a truncated cost line is refused")
    except SystemExit as e:
        check(e.code == 1, "a truncated cost line is refused")


def main():
    vm_run_cases()
    parser_cases()
    TAP.with_gnuplot(bench_run_case, "bench/run --icount")
    return TAP.finish()


if __name__ == "__main__":
    sys.exit(main())
