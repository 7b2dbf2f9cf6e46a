"""A warm run finds each file's dependencies and importers from the import lines the cache
kept (by content digest), without scanning the texts again (issue 22); what it finds is the
same, an edited file is scanned again, and a damaged record is ignored."""

import json
import textwrap
from pathlib import Path

from nanlint.semantic import modules
from test_project_modules import MODEL_LOGITS, MODEL_SOFTMAX as MODEL, TRAIN as _TRAIN, write as _write

TRAIN = _TRAIN.format(source=".model")


def _run(run_cli, tmp_path, monkeypatch, *paths) -> tuple[list[str], int]:
    """(the findings as file:line:code, how many texts the run scanned for import lines)."""
    scans = []
    real = modules._import_lines
    monkeypatch.setattr(modules, "_import_lines", lambda text: scans.append(1) or real(text))
    code, out, err = run_cli(*(paths or (str(tmp_path / "pkg"),)), "--cache-dir", str(tmp_path / "cache"),
                             "--format", "json", "--exit-zero")
    assert code == 0, err
    found = sorted(f"{Path(f['filename']).name}:{f['location']['row']}:{f['code']}" for f in json.loads(out))
    return found, len(scans)


def _store(tmp_path) -> Path:
    stored = list((tmp_path / "cache").rglob("imports-*.json"))
    assert len(stored) == 1, stored
    return stored[0]


def test_a_warm_run_scans_no_text_and_finds_the_same(run_cli, tmp_path, monkeypatch):
    _write(tmp_path, {"pkg/__init__.py": "", "pkg/model.py": MODEL, "pkg/train.py": TRAIN})
    cold, scanned = _run(run_cli, tmp_path, monkeypatch)
    assert cold == ["train.py:5:NAN103"] and scanned >= 2
    records = json.loads(_store(tmp_path).read_text())
    assert len(records) >= 2  # model.py and train.py (the empty __init__ has no import)
    warm, rescanned = _run(run_cli, tmp_path, monkeypatch)
    assert warm == cold and rescanned == 0


def test_an_edited_file_is_scanned_again(run_cli, tmp_path, monkeypatch):
    _write(tmp_path, {"pkg/__init__.py": "", "pkg/model.py": MODEL, "pkg/train.py": TRAIN})
    _run(run_cli, tmp_path, monkeypatch)
    _write(tmp_path, {"pkg/model.py": MODEL_LOGITS})
    found, scanned = _run(run_cli, tmp_path, monkeypatch)
    assert found == [] and scanned == 1  # the new model.py; train.py's lines were kept
    # the train.py that no longer imports the model: its new text is scanned, its key changes
    _write(tmp_path, {"pkg/model.py": MODEL, "pkg/train.py": TRAIN.replace("from .model", "from .other")})
    found, scanned = _run(run_cli, tmp_path, monkeypatch)
    assert found == [] and scanned == 1  # model.py's text is one the store has seen


def test_a_damaged_store_is_ignored_and_rewritten(run_cli, tmp_path, monkeypatch):
    _write(tmp_path, {"pkg/__init__.py": "", "pkg/model.py": MODEL, "pkg/train.py": TRAIN})
    cold, _ = _run(run_cli, tmp_path, monkeypatch)
    store = _store(tmp_path)
    records = json.loads(store.read_text())
    bad = {digest: [["not", "a", "record"]] for digest in records}  # every record of the wrong shape
    store.write_text(json.dumps(bad))
    found, scanned = _run(run_cli, tmp_path, monkeypatch)
    assert found == cold and scanned >= 2
    store.write_text("{not json")
    found, scanned = _run(run_cli, tmp_path, monkeypatch)
    assert found == cold and scanned >= 2
    assert isinstance(json.loads(_store(tmp_path).read_text()), dict)  # written again, whole


def test_a_record_reads_back_as_the_scan():
    text = textwrap.dedent("""\
        import pkg.losses as L, numpy as np
        from . import nets
        from ..model import (Net,  # the model
                             predict as p)
        y = L.triplet(nets.head(p(x)))
    """)
    lines = modules._import_lines(text)
    assert lines and modules._from_record(json.loads(json.dumps(modules.line_record(lines)))) == lines
    assert modules._from_record([[0, "m", None, ["m"], []]]) is None  # attributes for each bound name
    assert modules._from_record([[0, "m", None, [3], [[]]]]) is None  # names are strings
    assert modules._from_record([[True, "m", ["a"], ["a"], [["f", 1]]]]) is None


def test_the_store_keeps_the_most_recent_records(tmp_path, monkeypatch):
    from nanlint.lint import cache as cache_mod

    monkeypatch.setattr(cache_mod, "MAX_IMPORT_RECORDS", 3)
    cache = cache_mod.Cache(tmp_path / "cache")
    lines = cache.import_lines()
    assert lines == {}
    lines.update({f"d{k}": [] for k in range(5)})
    cache.store_import_lines(lines)
    again = cache_mod.Cache(tmp_path / "cache")
    assert list(again.import_lines()) == ["d2", "d3", "d4"]
    [stored] = (tmp_path / "cache").rglob("imports-*.json")
    before = stored.stat()
    again.store_import_lines(again.import_lines())  # nothing added: not written again
    after = stored.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
