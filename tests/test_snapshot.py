"""The pinned behaviour oracle (scripts/snapshot.py): the findings, messages, fixes and
fixed texts on the rule pages, the fixtures and the examples are those pinned in
tests/snapshot/local.json. A refactor leaves them identical; a change of behaviour
regenerates the snapshot in its own commit (``python scripts/snapshot.py --update``)
and names the reviewed differences in its message. The corpora's part is in
tests/test_corpus.py (it reuses that module's one lint of each corpus)."""

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("nanlint_snapshot", ROOT / "scripts" / "snapshot.py")
snapshot = importlib.util.module_from_spec(_spec)
sys.modules["nanlint_snapshot"] = snapshot
_spec.loader.exec_module(snapshot)


def test_pages_fixtures_and_examples_match_the_pinned_snapshot():
    expected = json.loads(snapshot.LOCAL.read_text(encoding="utf-8"))
    got = snapshot.local()
    assert set(got) == set(expected), "cases added or removed: regenerate with scripts/snapshot.py --update"
    differences = snapshot.diff(expected, got)
    assert not differences, "behaviour changed against tests/snapshot/local.json:\n" + "\n".join(differences)


def test_the_snapshot_can_fail():
    expected = json.loads(snapshot.LOCAL.read_text(encoding="utf-8"))
    label = next(k for k, v in expected.items() if v["findings"])
    changed = dict(expected, **{label: dict(expected[label], findings=[])})
    assert snapshot.diff(expected, changed) and label in snapshot.diff(expected, changed)[0]
