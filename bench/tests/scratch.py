"""A scratch copy of bench/run and what it runs, for the host tests of its
plumbing (cost-test.py, arch-test.py): its vm/run is a stand-in that
records its arguments (in TMP/vm-run.args, one call a line) and prints a
recorded guest output instead of booting anything."""
import os
import shutil
import stat

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def scratch_tree(tmp, sample, stage_file):
    """bench/run, bench/cost.py, bench/results.py and scripts/lib.sh in
    TMP, STAGE_FILE (a path under TMP: what bench/run looks for to know
    the build is there) made, and a vm/run that prints SAMPLE."""
    for f in ("bench/run", "bench/cost.py", "bench/results.py", "scripts/lib.sh"):
        os.makedirs(os.path.join(tmp, os.path.dirname(f)), exist_ok=True)
        shutil.copy2(os.path.join(TOP, f), os.path.join(tmp, f))
    os.makedirs(os.path.join(tmp, os.path.dirname(stage_file)), exist_ok=True)
    os.makedirs(os.path.join(tmp, "vm"), exist_ok=True)
    for path, text in ((os.path.join(tmp, stage_file), "#!/bin/sh\n"),
                       (os.path.join(tmp, "vm", "run"),
                        f'#!/bin/sh\necho "$@" >>"{tmp}/vm-run.args"\ncat "{sample}"\n')):
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)


class Tap:
    """The TAP stream of a test: check() each case, finish() the plan."""

    def __init__(self):
        self.n = 0
        self.failed = 0
        print("TAP version 13")

    def check(self, good, what):
        self.n += 1
        self.failed += 0 if good else 1
        print(("ok" if good else "not ok") + f" {self.n} - {what}")
        return good

    def with_gnuplot(self, case, what):
        """CASE() where gnuplot is (bench/run draws with it), else a skip."""
        if shutil.which("gnuplot"):
            case()
        else:
            self.check(True, f"{what} # SKIP no gnuplot (bench/run wants it)")

    def finish(self):
        """The plan; the exit status."""
        print(f"1..{self.n}")
        return 1 if self.failed else 0
