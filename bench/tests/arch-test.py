#!/usr/bin/env python3
"""bench/run --arch on the host (no guest, no timing asserted): the
argument's handling (arm64 or riscv64, nothing else; what riscv64 has
not: the cost half, the mainline kernel, the busy and gzip workloads,
each refused in one line before anything boots), and a riscv64 run
through a scratch copy of bench/run whose vm/run is a stand-in printing
a recorded riscv64 guest output (riscv-sample.txt, from a real
--arch riscv64 --quick run): vm/run gets --arch riscv64 and the
profiling half alone, the raw lines say the post-mortem half was
skipped, and results.md labels the methods with the riscv64 shadow
stack's name. TAP on stdout.

Usage: arch-test.py"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
SAMPLE = os.path.join(HERE, "riscv-sample.txt")
RISCV_STAGE = os.path.join("build", "riscv64", "stage", "bench", "profile.sh")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(TOP, "bench"))
from scratch import Tap, scratch_tree  # noqa: E402
import results  # noqa: E402

TAP = Tap()
check = TAP.check


def run(tmp, *args):
    out = os.path.join(tmp, "out")
    return subprocess.run([os.path.join(tmp, "bench", "run"), "-o", out, *args],
                          capture_output=True, text=True)


def vm_calls(tmp):
    try:
        return open(os.path.join(tmp, "vm-run.args")).read().splitlines()
    except FileNotFoundError:
        return []


def refusals():
    """Each bad use: its status, one line on stderr naming the fix, and
    no guest booted."""
    cases = [
        (["--arch"], 64, "usage: bench/run", "--arch without a value"),
        (["--arch", "mips"], 1, "--arch: arm64 or riscv64, not 'mips'", "--arch mips"),
        (["--arch", "riscv64", "--cost"], 1, "the cost half is arm64's alone", "--arch riscv64 --cost"),
        (["--arch", "riscv64", "--icount"], 1, "the cost half is arm64's alone", "--arch riscv64 --icount"),
        (["--arch", "riscv64", "--kernel", "mainline"], 1, "no riscv64 mainline kernel",
         "--arch riscv64 --kernel mainline"),
        (["--arch", "riscv64", "--workloads", "split gzip"], 1, "riscv64 has split and depth:N alone, not 'gzip'",
         "--arch riscv64 --workloads 'split gzip'"),
        (["--workloads", "busy:4", "--arch", "riscv64"], 1, "not 'busy:4'",
         "--workloads busy:4 before --arch riscv64"),
    ]
    for args, status, text, what in cases:
        with tempfile.TemporaryDirectory() as tmp:
            scratch_tree(tmp, SAMPLE, RISCV_STAGE)
            p = run(tmp, *args)
            lines = p.stderr.splitlines()
            check(p.returncode == status and len(lines) == 1 and text in lines[0] and not vm_calls(tmp),
                  f"{what}: refused (status {p.returncode}, {lines[:1]}), nothing booted")


def riscv_run():
    with tempfile.TemporaryDirectory() as tmp:
        scratch_tree(tmp, SAMPLE, RISCV_STAGE)
        p = run(tmp, "--arch", "riscv64", "--kernel", "project", "--repeat", "1")
        if not check(p.returncode == 0, f"bench/run --arch riscv64 with a stand-in vm/run (status {p.returncode})"):
            print("# " + p.stderr.replace("\n", "\n# "))
            return
        calls = vm_calls(tmp)
        args = calls[0].split() if calls else []
        check(len(calls) == 1 and "--arch" in args and args[args.index("--arch") + 1] == "riscv64",
              "vm/run boots the riscv64 guest, once")
        check("/opt/gcsprof/bench/profile.sh" in args and "postmortem.sh" not in calls[0],
              "the guest runs the profiling half alone")
        raw = open(os.path.join(tmp, "out", "raw-project.txt")).read()
        check("note|the post-mortem half is arm64's alone" in raw, "the raw lines say the post-mortem half was skipped")
        md = open(os.path.join(tmp, "out", "results.md")).read()
        check("### project kernel (riscv64)" in md and "on cpu-clock:u" in md,
              "results.md: the architecture and the event sampled on")
        check("| perf --call-graph fp, Zicfiss chains |" in md and "GCS chains" not in md,
              "results.md: the shadow-stack chains are Zicfiss's")
        check("no eu-stackprof in this riscv64 guest" in md and "skipped on riscv64" in md,
              "results.md: what did not run, and why")
        check("bench/run --arch riscv64 took" in md, "the host line names the architecture")
    with tempfile.TemporaryDirectory() as tmp:
        scratch_tree(tmp, SAMPLE, RISCV_STAGE)
        p = run(tmp, "--arch", "riscv64", "--repeat", "1")
        kernels = [c.split()[c.split().index("--kernel") + 1] for c in vm_calls(tmp)]
        check(p.returncode == 0 and kernels == ["project", "reference"],
              f"--arch riscv64 without --kernel: the project and reference kernels ({kernels})")


def old_info_line():
    """A raw file from before the architecture field reads as arm64's."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "raw.txt")
        with open(path, "w") as f:
            f.write("info|6.12.0|2|499|3|5|2026-01-01T00:00Z|6.12\n")
        r = results.parse("project", path)
        check(r["arch"] == "arm64" and r["event"] == "cycles:u" and
              results.label(r, "perf-fp-gcs") == "perf --call-graph fp, GCS chains",
              "an info line without the architecture: arm64, cycles:u, GCS")


def main():
    refusals()
    old_info_line()
    TAP.with_gnuplot(riscv_run, "bench/run --arch riscv64")
    return TAP.finish()


if __name__ == "__main__":
    sys.exit(main())
