"""The behaviour oracle: every finding (code, span, message, fix) and every fixed text
nanlint produces on the rule pages, the fixtures, the examples and the seed programs,
pinned in ``tests/snapshot/local.json``; the corpora's findings (with their messages)
pinned in ``tests/snapshot/corpus-NAME.json`` by ``tests/test_corpus.py``.

A change that moves code must leave both identical. A change that alters behaviour on
purpose regenerates them in its own commit (``python scripts/snapshot.py --update``,
and ``NANLINT_UPDATE_SNAPSHOT=1 pytest tests/test_corpus.py`` for the corpora) and says
in its message which differences were reviewed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCAL = ROOT / "tests" / "snapshot" / "local.json"


def corpus_path(name: str) -> Path:
    return ROOT / "tests" / "snapshot" / f"corpus-{name}.json"


def _finding(f) -> dict:
    return {"code": f.code, "start": list(f.start), "end": list(f.end), "message": f.message,
            "fix": f.fix_applicability, "fix_message": f.fix_message,
            "edits": [[e.content, list(e.start), list(e.end)] for e in f.edits]}


def _digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()[:16]


def _one(linter, source: bytes, path: str) -> dict:
    lint = linter.lint_source(source, path)
    fixed = linter.fix_source(source, path, unsafe=True)
    return {"findings": [_finding(f) for f in lint.findings], "error": lint.error,
            "fixed": _digest(fixed.fixed_source), "fixed_count": fixed.fixed, "fix_error": fixed.error}


def sources() -> list[tuple[str, bytes, dict, list[str] | None]]:
    """(label, source, settings, rule codes or None for every rule) of each case."""
    from nanlint.lint import catalogue

    out = []
    for code, page in sorted(catalogue.pages().items()):
        for i, block in enumerate(page.blocks()):
            label = f"page:{code}:{block.kind}:{block.label}:{i}"
            out.append((label + ":alone", block.code.encode(), page.settings(), [code]))
            out.append((label + ":all", block.code.encode(), page.settings(), None))
    for folder in ("fixtures", "examples"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            out.append((f"{folder}:{path.relative_to(ROOT).as_posix()}", path.read_bytes(), {}, None))
    return out


def local() -> dict:
    from nanlint.lint.engine import Linter
    from nanlint.rules.base import all_rules

    rules = all_rules()
    out = {}
    for label, source, settings, codes in sources():
        chosen = [r for r in rules if codes is None or r.code in codes]
        out[label] = _one(Linter(chosen, settings), source, "example.py")
    return out


def corpus_entries(entries: list[dict]) -> list[dict]:
    keep = ("package", "path", "code", "expr", "n", "line", "message")
    return sorted(({k: e[k] for k in keep} for e in entries),
                  key=lambda e: (e["package"], e["path"], e["line"], e["code"], e["n"]))


def save(data, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def diff(expected: dict, got: dict, limit: int = 20) -> list[str]:
    out = []
    for key in sorted(set(expected) | set(got)):
        if expected.get(key) != got.get(key):
            out.append(f"{key}:\n  pinned: {json.dumps(expected.get(key))[:600]}\n  now:    {json.dumps(got.get(key))[:600]}")
            if len(out) >= limit:
                break
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update", action="store_true", help="rewrite tests/snapshot/local.json")
    args = parser.parse_args(argv)
    got = local()
    if args.update:
        save(got, LOCAL)
        print(f"wrote {LOCAL.relative_to(ROOT)}: {len(got)} cases")
        return 0
    expected = json.loads(LOCAL.read_text(encoding="utf-8"))
    differences = diff(expected, got)
    print("\n".join(differences) if differences else f"{len(got)} cases identical")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
