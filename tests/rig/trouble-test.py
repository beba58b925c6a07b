#!/usr/bin/env python3
"""vm/run fails a run on what a kernel log says went wrong: every kind of
report the debug kernel can make must match KERNEL_TROUBLE, and a program's
own output (no printk time stamp) or an ordinary kernel line must not.
TAP on stdout; no guest needed."""

import importlib.machinery
import importlib.util
import os
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_vm_run():
    path = os.path.join(TOP, "vm", "run")
    loader = importlib.machinery.SourceFileLoader("vm_run", path)
    spec = importlib.util.spec_from_loader("vm_run", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


TROUBLE = [
    "[   12.345678] Kernel panic - not syncing: Attempted to kill init!",
    "[    3.000001] Internal error: Oops: 0000000096000004 [#1] PREEMPT SMP",
    "[    4.100000] BUG: KASAN: slab-use-after-free in gcs_free+0x30/0x60",
    "[    4.100000] BUG: sleeping function called from invalid context at mm/gup.c:1",
    "[    5.200000] WARNING: possible circular locking dependency detected",
    "[    5.200000] WARNING: CPU: 1 PID: 77 at arch/arm64/kernel/process.c:300 foo+0x1/0x2",
    "[    6.300000] UBSAN: shift-out-of-bounds in arch/arm64/mm/gcs.c:42:9",
    "[    7.400000] kmemleak: 3 new suspected memory leaks (see /sys/kernel/debug/kmemleak)",
    "[  120.000000] INFO: task gcs-stress:81 blocked for more than 120 seconds.",
    "[   60.000000] rcu: INFO: rcu_sched self-detected stall on CPU",
    "[   60.000000] watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [gcs-stress:81]",
]
BENIGN = [
    "WARNING: this line was printed by a program, not by the kernel",
    "inner| [    4.100000] BUG: KASAN: a nested guest's line, reported by its own test",
    "[    0.561467] kvm [1]: VHE mode initialized successfully",
    "[    2.204900] Freeing initrd memory: 242756K",
    "[    0.000000] Kernel command line: console=ttyAMA0 quiet panic=-1",
]


def main():
    trouble = load_vm_run().KERNEL_TROUBLE
    n = failed = 0
    for line, want in [(t, True) for t in TROUBLE] + [(b, False) for b in BENIGN]:
        n += 1
        got = bool(trouble.search(line))
        verdict = "fails the run" if want else "passes"
        if got == want:
            print(f"ok {n} - {verdict}: {line}")
        else:
            failed += 1
            print(f"not ok {n} - should be a run that {verdict}: {line}")
    print(f"1..{n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
