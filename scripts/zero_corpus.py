"""Run chosen rules over a corpus defined by a ``scripts/corpus.py`` (this repository's
framework corpus, or issue 12's training corpus) and list every finding, for review.

    python scripts/zero_corpus.py CORPUS_PY CORPUS RULES OUT.json
    python scripts/zero_corpus.py scripts/corpus.py training NAN107,NAN108,NAN206 /tmp/z.json
"""
import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path


def main(argv: list[str]) -> int:
    corpus_py, which, codes, out = argv
    sys.path.insert(0, str(Path(corpus_py).resolve().parent))
    spec = importlib.util.spec_from_file_location("corpus_module", corpus_py)
    corpus = importlib.util.module_from_spec(spec)
    sys.modules["corpus_module"] = corpus
    spec.loader.exec_module(corpus)
    from nanlint.rules.base import find

    corpora = getattr(corpus, "CORPORA", None)
    packages = corpora[which].locate() if corpora else corpus.locate()
    rules = [find(c) for c in codes.split(",")]
    findings, stats = corpus.lint_corpus(packages, jobs=2, rules=rules)
    Path(out).write_text(json.dumps({"findings": findings, "stats": stats}, indent=1))
    print(f"{stats['files']} files, {stats['seconds']} s: {dict(Counter(f['code'] for f in findings))}")
    for f in findings:
        print(f"{f['code']} {f['package']} {f['path']}:{f['line']} | {f['expr'][:80]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
