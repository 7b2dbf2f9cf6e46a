"""An edit relinted from the statements it touched (nanlint.lint.incremental, issue 22) gives
the findings the whole text's analysis gives, or says None where it cannot."""

from __future__ import annotations

import pytest

from nanlint.lint import incremental
from nanlint.lint.engine import Linter
from nanlint.rules.base import all_rules
from nanlint.source import chunks, large
from nanlint.source.lines import split_lines
from nanlint.source.syntax import precheck

HEAD = "import tensorflow as tf\nimport torch\n\nSCALE = 2.0\n\n\n"
BODY = """def loss_{i}(z):
    p = tf.nn.softmax(z)
    q = p * SCALE
    return tf.math.log(p)


def fine_{i}(x):
    return torch.log_softmax(x, 0)


"""
TAPE = """import tensorflow as tf


def model_loss(model, x):
    y = model(x)
    return tf.reduce_mean(tf.where(y != 0, 1 / y, tf.zeros_like(y)))


{middle}def train_step(model, opt, x):
    with tf.GradientTape() as tape:
        loss = model_loss(model, x)
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
"""
HAZARD = "    h = torch.log(torch.softmax(z, 0))\n"


def linter(**settings) -> Linter:
    return Linter([r for r in all_rules() if r.default], {"edits": False, **settings})


def snapshot(lint: Linter, text: str, units=None) -> incremental.Snapshot:
    checked = precheck(text.encode())
    result = lint.lint_source(text.encode(), "t.py", checked=checked)
    return incremental.Snapshot(text, units or incremental.units_of(checked.tree), result.findings)


def keys(findings) -> list[tuple]:
    return sorted((f.code, f.start, f.end, f.message) for f in findings)


def edit(text: str, row: int, insert: str = "", delete: int = 0) -> str:
    """``text`` with ``delete`` lines from line ``row`` removed and ``insert`` put there."""
    lines = text.splitlines(keepends=True)
    return "".join(lines[:row - 1]) + insert + "".join(lines[row - 1 + delete:])


SOURCE = HEAD + "".join(BODY.format(i=i) for i in range(6))
EDITS = {
    "a hazard typed in a body": (SOURCE, lambda t: edit(t, 18, HAZARD)),
    "a line of a body removed": (SOURCE, lambda t: edit(t, 19, delete=1)),
    "a whole function removed": (SOURCE, lambda t: edit(t, 7, delete=10)),
    "a function added at the end": (SOURCE, lambda t: t + "def g(z):\n    return tf.log(tf.nn.softmax(z))\n"),
    "a line added at the end of a def": (SOURCE, lambda t: edit(t, 11, HAZARD)),
    "blank lines between statements": (SOURCE, lambda t: edit(t, 12, "\n\n\n")),
    "a comment above the first def": (SOURCE, lambda t: edit(t, 5, "# a note\n")),
    "the module's constant rebound": (SOURCE, lambda t: edit(t, 4, "SCALE = 0.0\n", delete=1)),
    "the fused form written": (SOURCE, lambda t: edit(t, 10, "    return tf.nn.log_softmax(z)\n", delete=1)),
    "everything after the imports removed": (SOURCE, lambda t: edit(t, 3, delete=len(t.splitlines()) - 2)),
    "CRLF line breaks": (SOURCE.replace("\n", "\r\n"), lambda t: edit(t, 18, HAZARD.replace("\n", "\r\n"))),
    # the tape's function is linted again with the edited one it calls (its reader)
    "a line typed in the function a tape calls": (TAPE.format(middle=""), lambda t: edit(t, 6, "    z = 1\n")),
    # the finding of model_loss names lines below it: moved with them
    "lines added between a function and its tape": (TAPE.format(middle=""), lambda t: edit(t, 9, "X = 1\n\n\n")),
}


@pytest.mark.parametrize("name", list(EDITS))
def test_an_edit_gives_what_the_whole_texts_analysis_gives(name):
    text, change = EDITS[name]
    lint = linter()
    before = snapshot(lint, text)
    assert before.findings or name == "a comment above the first def"
    new = change(text)
    after = incremental.relint(lint, "t.py", before, new)
    assert after is not None, "a run of whole statements was edited"
    whole = snapshot(lint, new)
    assert keys(after.findings) == keys(whole.findings)
    # the statements kept for the next edit are those of the new text
    assert (after.units.firsts, after.units.lasts, after.units.imports) == \
        (whole.units.firsts, whole.units.lasts, whole.units.imports)
    assert [large.bound_names(s) for s in precheck(new).tree.body] == after.units.binds


def test_a_message_names_the_moved_line():
    text = TAPE.format(middle="")
    lint = linter()
    before = snapshot(lint, text)
    [finding] = before.findings
    assert "called on line 11 under the GradientTape on line 10" in finding.message
    after = incremental.relint(lint, "t.py", before, edit(text, 9, "X = 1\n\n\n"))
    [moved] = after.findings
    assert moved.start == finding.start and "called on line 14 under the GradientTape on line 13" in moved.message


@pytest.mark.parametrize("change", [
    lambda t: edit(t, 18, "    h = torch.log(torch.softmax(z,\n"),  # a bracket opened
    lambda t: edit(t, 18, '    """a docstring begun\n'),  # a string opened
    lambda t: edit(t, 7, "    "),  # a top-level statement indented
    lambda t: edit(t, 17, "else:\n    pass\n"),  # a clause with no statement of its own
    lambda t: edit(t, 2, delete=1),  # an import removed: every call's resolution may change
    lambda t: edit(t, 3, "import numpy as np\n"),  # one added
])
def test_an_edit_that_is_no_run_of_statements_or_edits_an_import_is_analysed_whole(change):
    lint = linter()
    assert incremental.relint(lint, "t.py", snapshot(lint, SOURCE), change(SOURCE)) is None


def test_directives_judged_or_a_long_region_mean_the_whole_text(monkeypatch):
    judging = Linter([r for r in all_rules() if r.default or r.code == "NAN002"], {"edits": False})
    assert incremental.relint(judging, "t.py", snapshot(judging, SOURCE), edit(SOURCE, 18, HAZARD)) is None
    lint = linter()
    before = snapshot(lint, SOURCE)
    monkeypatch.setattr(incremental, "MAX_REGION", 20)
    assert incremental.relint(lint, "t.py", before, edit(SOURCE, 18, HAZARD)) is None


def test_an_unchanged_text_keeps_its_findings():
    lint = linter()
    before = snapshot(lint, SOURCE)
    after = incremental.relint(lint, "t.py", before, SOURCE)
    assert after.findings is before.findings and after.units is before.units


def long_def(n: int) -> str:
    body = "".join(f"    x = tf.nn.relu(tf.matmul(x, W_{i}) + b_{i})\n    h_{i} = tf.reduce_sum(x * {i}, axis=-1)\n"
                   for i in range(n))
    return "import tensorflow as tf\n\ndef build(x):\n" + body + \
        "    p = tf.nn.softmax(x)\n    return tf.math.log(p)\n\n\ndef after(z):\n    return tf.log(tf.nn.softmax(z))\n"


def test_an_edit_in_a_long_def_is_relinted_from_its_body_statements(monkeypatch):
    """A def longer than MAX_REGION (and cut by the large-file reduction): the region is the
    body statements the edit touched, compiled under ``if 1:``; the def's outline is spliced."""
    monkeypatch.setattr(incremental, "MAX_REGION", 5_000)
    monkeypatch.setattr(large, "LONG", 5_000)
    text = long_def(600)  # 1,200 body lines: a Skeleton outlines it
    lint = linter()
    units = incremental.units_of(chunks.compile_large(text))
    assert units.outlines
    before = snapshot(lint, text, units)
    row = 3 + 2 * 300 + 1  # a body line in the middle
    new = edit(text, row, "    y = tf.math.log(tf.nn.softmax(x))\n")
    where = incremental.region(units, split_lines(text, keepends=True), split_lines(new, keepends=True))
    assert where.inside == (1,) and where.new_last - where.old_first < 3
    after = incremental.relint(lint, "t.py", before, new)
    assert keys(after.findings) == keys(snapshot(lint, new).findings)
    assert [f.start[0] for f in after.findings] == [row, 3 + 1200 + 3, 3 + 1200 + 7]
    moved = after.units.outlines[1]
    assert moved.last == before.units.outlines[1].last + 1 and len(moved.parts) == 1203
    # a second edit reads the spliced outline: a statement removed further down
    again = incremental.relint(lint, "t.py", after, edit(new, row + 100, delete=1))
    assert keys(again.findings) == keys(snapshot(lint, edit(new, row + 100, delete=1)).findings)
    # a body line dedented out of the def is no run of its body's statements
    assert incremental.relint(lint, "t.py", before, edit(text, row, "y = 1\n")) is None


def test_the_fixes_around_a_line_are_those_of_the_whole_analysis():
    """A quick fix in a large document: the statements around the request linted as a window,
    their fixes' edits built (libcst parses the window), the same as the whole text's."""
    lint, editing = linter(), linter(edits=True)
    before = snapshot(lint, SOURCE)
    whole = editing.lint_source(SOURCE.encode(), "t.py").findings
    for row in (10, 30, 40):
        near = incremental.around(editing, "t.py", before, row, row)
        assert near and all(f.edits for f in near)
        first, last = incremental.statement_rows(before, split_lines(SOURCE, keepends=True), row)
        assert (first, last) == (row - 3, row)  # the def whose return it is
        assert [(f.code, f.start, f.message, f.edits) for f in near] == \
            [(f.code, f.start, f.message, f.edits) for f in whole if first <= f.start[0] <= last]


def seeded_edits(text: str, seed: int):
    """Edits an editor makes, at seeded places: a hazard line typed below a line (at its
    indentation), a line deleted, a line duplicated, a function typed above a line."""
    import random

    rng = random.Random(seed)
    lines = split_lines(text, keepends=True)
    for kind in ("type", "delete", "duplicate", "function"):
        k = rng.randrange(len(lines))
        indent = lines[k][:len(lines[k]) - len(lines[k].lstrip())]
        if kind == "type":
            yield "".join(lines[:k + 1]) + indent + "zz = tf.math.log(tf.nn.softmax(zz))\n" + "".join(lines[k + 1:])
        elif kind == "delete":
            yield "".join(lines[:k] + lines[k + 1:])
        elif kind == "duplicate":
            yield "".join(lines[:k + 1] + lines[k:])
        else:
            yield "".join(lines[:k]) + "\ndef zz_f(x):\n    return torch.log(torch.softmax(x, 0))\n\n" + "".join(lines[k:])


def test_seeded_edits_of_the_examples_and_fixtures_give_the_whole_analysis():
    """Every seeded edit of the shipped examples and of the hazard fixtures that relint
    answers (an edit that compiles as a run of statements) gives the whole text's findings,
    every rule on, the may tier included (609 such edits of the three bench corpora did)."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    files = sorted(root.glob("examples/*.py")) + sorted(root.glob("fixtures/**/*.py"))[::4]
    lint = Linter([r for r in all_rules() if r.code != "NAN002"], {"edits": False, "may": True})
    answered = 0
    for n, path in enumerate(files):
        text = path.read_text()
        before = snapshot(lint, text)
        for new in seeded_edits(text, n):
            after = incremental.relint(lint, str(path), before, new)
            if after is not None:
                answered += 1
                assert keys(after.findings) == keys(snapshot(lint, new).findings), (path, new)
    assert answered > 2 * len(files)
