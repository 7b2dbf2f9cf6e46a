"""The site filter must never hide a finding: lint a corpus of ``scripts/corpus.py`` with
the chosen rules twice, with the prefilter and site filter and without (every file
parsed with libcst), and list the findings only the unfiltered run has.

    python scripts/site_soundness.py training NAN107,NAN108,NAN206
    python scripts/site_soundness.py frameworks NAN107,NAN108,NAN206

Exit 1 when the filter hid a finding.  ``tests/test_speed.py`` makes the same comparison
on the rule pages' examples and on a few framework files; this is the whole-corpus one
(minutes: the unfiltered run parses every file).
"""
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    which, codes = argv
    sys.path[:0] = [str(HERE), str(HERE.parent)]
    import corpus
    from nanlint.lint import runner
    from nanlint.lint.engine import Linter
    from nanlint.rules.base import find

    packages = corpus.CORPORA[which].locate()
    # the may tier too: a gate that hides a weak finding is as wrong as one hiding a strong one
    linter = Linter([find(c) for c in codes.split(",")],
                    {"frameworks": {p.name: p.version for p in packages}, "root": None, "may": True})
    files = [f for p in packages for f in p.files(False)]
    found = {}
    for prefilter in (True, False):
        started = time.perf_counter()
        stats = runner.Stats()
        results = runner.run(files, lambda _: linter, fix=False, unsafe=False, write=False, jobs=2,
                             prefilter=prefilter, stats=stats)
        found[prefilter] = {(str(f), x.code, x.start) for f, (r, _) in zip(files, results) for x in r.findings}
        print(f"{which}: {len(files)} files, prefilter {'on' if prefilter else 'off'}: {len(found[prefilter])} "
              f"findings in {time.perf_counter() - started:.0f} s", flush=True)
    hidden = sorted(found[False] - found[True])
    for path, code, start in hidden:
        print(f"HIDDEN {code} {path}:{start}")
    print(f"{len(hidden)} findings hidden by the filter")
    return 1 if hidden else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
