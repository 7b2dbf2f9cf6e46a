"""Jupyter notebooks: code cells linted as one module, ``cell N`` positions, IPython
syntax skipped, and --fix rewriting only the changed cells, byte for byte otherwise."""

import difflib
import json

import pytest

MARKDOWN = {"cell_type": "markdown", "metadata": {}, "source": ["# Training \u00e9t\u00e9\n", "Some notes."]}


def code(source, outputs=None, count=None, tags=None):
    lines = source.splitlines(keepends=True)
    return {"cell_type": "code", "execution_count": count, "metadata": {"tags": tags or []},
            "outputs": outputs or [], "source": lines}


def notebook(*cells, language="python"):
    return {
        "cells": list(cells),
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": language, "name": "python3"},
                     "language_info": {"name": language, "version": "3.11.4"}},
        "nbformat": 4, "nbformat_minor": 5,
    }


def jupyter_bytes(nb):
    """What Jupyter writes: nbformat's own json.dumps settings."""
    return (json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


OUTPUT = {"name": "stdout", "output_type": "stream", "text": ["loss 0.25\n"]}
NB = notebook(
    code("%matplotlib inline\nimport torch\nimport torch.nn.functional as F", count=1),
    MARKDOWN,
    code("%%writefile helper.py\nx = torch.log(F.softmax(z, dim=1))", outputs=[OUTPUT], count=2),  # a file: skipped
    code("!pip install einops\nz = torch.randn(4, 3)\nF.softmax?\n?torch.log", count=3),
    code("def loss(z):\n    return torch.log(F.softmax(z, dim=1))\n\nprint(loss(z))", outputs=[OUTPUT], count=4,
         tags=["keep"]),
)


@pytest.fixture
def nb_path(tmp_path):
    p = tmp_path / "train.ipynb"
    p.write_bytes(jupyter_bytes(NB))
    return p


def test_notebook_findings_name_the_cell(run_cli, nb_path):
    code_, out, err = run_cli("--isolated", "train.ipynb")
    assert code_ == 1, err
    # imports in cell 1 resolve in cell 5; the %%writefile cell (3) is skipped; magics are not syntax errors
    assert out.splitlines()[0] == ("train.ipynb:cell 5:line 2:col 12: NAN101 [*] log of softmax is -inf/NaN "
                                   "once a probability underflows to 0; use log_softmax")
    assert "Found 1 finding" in out
    _, out, _ = run_cli("--isolated", "--format", "json", "train.ipynb")
    [finding] = json.loads(out)
    assert finding["cell"] == 5
    assert finding["location"] == {"row": 2, "column": 12}
    assert finding["fix"]["edits"][0]["location"] == {"row": 2, "column": 12}


def test_discovery_finds_notebooks_but_not_checkpoints(run_cli, tmp_path):
    (tmp_path / "nbs" / ".ipynb_checkpoints").mkdir(parents=True)
    (tmp_path / "nbs" / "a.ipynb").write_bytes(jupyter_bytes(NB))
    (tmp_path / "nbs" / ".ipynb_checkpoints" / "a-checkpoint.ipynb").write_bytes(jupyter_bytes(NB))
    _, out, _ = run_cli("--isolated", ".")
    assert [line.split(":")[0] for line in out.splitlines()[:-1]] == ["nbs/a.ipynb"]


def test_fix_rewrites_only_the_changed_cell_source(run_cli, nb_path):
    before = nb_path.read_bytes()
    code_, out, err = run_cli("--isolated", "--fix", "train.ipynb")
    assert code_ == 0, (out, err)
    after = nb_path.read_bytes()
    diff = [d for d in difflib.unified_diff(before.decode().splitlines(), after.decode().splitlines(), lineterm="", n=0)
            if not d.startswith(("---", "+++", "@@"))]
    assert diff == ['-    "    return torch.log(F.softmax(z, dim=1))\\n",',
                    '+    "    return F.log_softmax(z, dim=1)\\n",']
    data = json.loads(after)
    assert data["cells"][4]["source"][1] == "    return F.log_softmax(z, dim=1)\n"
    assert data["cells"][0]["source"][0] == "%matplotlib inline\n"  # magics never written back changed
    code_, out, _ = run_cli("--isolated", "train.ipynb")
    assert code_ == 0, out


def test_magic_lines_survive_a_fix_in_the_same_cell(run_cli, tmp_path):
    nb = notebook(code("import torch\n%time y = 1\n!ls -la\ny = torch.log(torch.sigmoid(x))\nobj??\n%load_ext autoreload"))
    p = tmp_path / "m.ipynb"
    p.write_bytes(jupyter_bytes(nb))
    run_cli("--isolated", "--fix", "m.ipynb")
    assert json.loads(p.read_bytes())["cells"][0]["source"] == [
        "import torch\n", "%time y = 1\n", "!ls -la\n", "y = torch.nn.functional.logsigmoid(x)\n", "obj??\n",
        "%load_ext autoreload"]


def test_fix_adding_an_import_puts_it_in_a_cell(run_cli, tmp_path):
    nb = notebook(code("import jax.numpy as jnp\nfrom jax.nn import softmax"), MARKDOWN,
                  code("y = jnp.log(softmax(z))"))
    p = tmp_path / "j.ipynb"
    p.write_bytes(jupyter_bytes(nb))
    code_, out, err = run_cli("--isolated", "--fix", "j.ipynb")
    assert code_ == 0, (out, err)
    cells = json.loads(p.read_bytes())["cells"]
    assert "".join(cells[0]["source"]) == "import jax.numpy as jnp\nfrom jax.nn import softmax\nimport jax"
    assert "".join(cells[2]["source"]) == "y = jax.nn.log_softmax(z)"


@pytest.mark.parametrize("indent,ensure_ascii,final_newline", [(2, True, False), (4, False, True), ("\t", False, True)])
def test_fix_reproduces_the_json_layout(run_cli, tmp_path, indent, ensure_ascii, final_newline):
    nb = {"metadata": {"z": 1, "a": "\u00e9"}, "nbformat": 4, "nbformat_minor": 4,  # unsorted keys
          "cells": [MARKDOWN, code("import torch\ny = torch.log(torch.sigmoid(x))\n", count=7)]}
    raw = json.dumps(nb, indent=indent, ensure_ascii=ensure_ascii) + ("\n" if final_newline else "")
    p = tmp_path / "l.ipynb"
    p.write_bytes(raw.encode())
    run_cli("--isolated", "--fix", "l.ipynb")
    expected = raw.replace("torch.log(torch.sigmoid(x))", "torch.nn.functional.logsigmoid(x)")
    assert p.read_bytes() == expected.encode()


def test_fix_refuses_a_layout_it_cannot_reproduce(run_cli, tmp_path):
    nb = notebook(code("import torch\ny = torch.log(torch.sigmoid(x))"))
    raw = json.dumps(nb, indent=1).replace('"nbformat": 4', '"nbformat":   4')
    p = tmp_path / "odd.ipynb"
    p.write_text(raw)
    code_, _, err = run_cli("--isolated", "--fix", "odd.ipynb")
    assert code_ == 2
    assert "JSON layout cannot be reproduced exactly; notebook left unchanged" in err
    assert p.read_text() == raw


def test_a_cell_that_does_not_parse_is_nan001_in_that_cell(run_cli, tmp_path):
    p = tmp_path / "bad.ipynb"
    p.write_bytes(jupyter_bytes(notebook(code("import torch"), code("x = 1\nprint 'hello'"))))
    code_, out, _ = run_cli("--isolated", "bad.ipynb")
    assert code_ == 1
    assert out.startswith("bad.ipynb:cell 2:line 2:")
    assert "NAN001" in out


def test_not_a_notebook_is_nan001(run_cli, tmp_path):
    (tmp_path / "x.ipynb").write_text("{not json")
    code_, out, _ = run_cli("--isolated", "x.ipynb")
    assert code_ == 1 and "NAN001" in out and "not a notebook" in out


def test_noqa_in_a_cell_and_other_languages_skipped(run_cli, tmp_path):
    (tmp_path / "q.ipynb").write_bytes(jupyter_bytes(notebook(
        code("import torch\ny = torch.log(torch.sigmoid(x))  # noqa: NAN102"))))
    (tmp_path / "r.ipynb").write_bytes(jupyter_bytes(notebook(code("library(torch)\nx <- 1"), language="R")))
    code_, out, _ = run_cli("--isolated", ".")
    assert code_ == 0, out


def test_add_noqa_in_a_notebook_keeps_the_layout(run_cli, nb_path):
    before = nb_path.read_text()
    code_, _, err = run_cli("--isolated", "--add-noqa", "train.ipynb")
    assert code_ == 0, err
    after = nb_path.read_text()
    assert after == before.replace('"    return torch.log(F.softmax(z, dim=1))\\n"',
                                   '"    return torch.log(F.softmax(z, dim=1))  # noqa: NAN101\\n"')
    code_, out, _ = run_cli("--isolated", "train.ipynb")
    assert code_ == 0, out


def test_baseline_works_for_notebooks(run_cli, nb_path):
    run_cli("--isolated", "--write-baseline", "b.json", "train.ipynb")
    code_, out, _ = run_cli("--isolated", "--baseline", "b.json", "train.ipynb")
    assert code_ == 0, out


def test_ipython_lines_only_where_a_statement_starts():
    from nanlint.source.ipython import mask_magics

    text = 'x = ("a %s"\n     % y)\n%time f()\ns = """\n%not magic\n"""\nif x:\n    !ls\nhelp?\n'
    masked, magic = mask_magics(text)
    assert sorted(magic) == [2, 7, 8]
    assert [len(a) for a in masked.splitlines()] == [len(b) for b in text.splitlines()]  # same lengths
    compile(masked, "cell", "exec")
    assert mask_magics("%%bash\necho hi\n") is None


def test_diff_shows_the_changed_cell_source_not_json(run_cli, tmp_path):
    nb = notebook(code("%matplotlib inline\nimport torch"), code("!nvidia-smi\ny = torch.log(torch.sigmoid(x))\nprint(y)"))
    p = tmp_path / "d.ipynb"
    p.write_bytes(jupyter_bytes(nb))
    before = p.read_bytes()
    code_, out, err = run_cli("--isolated", "--diff", "d.ipynb")
    assert code_ == 1, err
    assert "Would fix 1 finding." in err
    assert out == ("--- d.ipynb:cell 2\n"
                   "+++ d.ipynb:cell 2\n"
                   "@@ -1,3 +1,3 @@\n"
                   " !nvidia-smi\n"  # as written, not the masked placeholder
                   "-y = torch.log(torch.sigmoid(x))\n"
                   "+y = torch.nn.functional.logsigmoid(x)\n"
                   " print(y)\n")
    assert '"source"' not in out and "cell 1" not in out  # no JSON; the unchanged cell is not shown
    assert p.read_bytes() == before
    run_cli("--isolated", "--fix", "d.ipynb")  # the diff is what --fix writes
    assert "".join(json.loads(p.read_bytes())["cells"][1]["source"]) == \
        "!nvidia-smi\ny = torch.nn.functional.logsigmoid(x)\nprint(y)"


def test_diff_shows_every_changed_cell_by_its_number(run_cli, tmp_path):
    nb = notebook(code("import torch\na = torch.log(torch.sigmoid(x))"), MARKDOWN, code("%time f()"),
                  code("b = torch.log(torch.sigmoid(z))\n"))
    p = tmp_path / "two.ipynb"
    p.write_bytes(jupyter_bytes(nb))
    code_, out, err = run_cli("--isolated", "--diff", "two.ipynb")
    assert code_ == 1, err
    assert "Would fix 2 findings." in err
    headers = [line for line in out.splitlines() if line.startswith(("---", "+++"))]
    assert headers == ["--- two.ipynb:cell 1", "+++ two.ipynb:cell 1", "--- two.ipynb:cell 4", "+++ two.ipynb:cell 4"]
    assert "+a = torch.nn.functional.logsigmoid(x)\n" in out
    assert "+b = torch.nn.functional.logsigmoid(z)\n" in out
    assert "No newline" not in out  # a cell stored without its final newline reads as a plain line


def test_diff_of_a_clean_notebook_is_empty(run_cli, tmp_path):
    p = tmp_path / "ok.ipynb"
    p.write_bytes(jupyter_bytes(notebook(code("%matplotlib inline\nimport torch"),
                                         code("y = torch.nn.functional.logsigmoid(x)"))))
    code_, out, err = run_cli("--isolated", "--diff", "ok.ipynb")
    assert code_ == 0, err
    assert out == ""
    assert "Would fix 0 findings." in err


def test_cell_diff_marks_a_changed_final_newline():
    from nanlint.lint.notebook import diff

    before = jupyter_bytes(notebook(code("x = 1")))
    after = jupyter_bytes(notebook(code("x = 2\n")))
    assert diff("n.ipynb", before, after) == ("--- n.ipynb:cell 1\n+++ n.ipynb:cell 1\n@@ -1 +1 @@\n"
                                              "-x = 1\n\\ No newline at end of cell\n+x = 2\n")


def test_a_broken_cell_does_not_hide_the_findings_of_the_others(run_cli, tmp_path):
    p = tmp_path / "half.ipynb"
    p.write_bytes(jupyter_bytes(notebook(
        code("import torch\nimport torch.nn.functional as F"),
        code("y = torch.log(torch.sigmoid(x))"),
        code("def half_written(z:\n    return"),  # cell 3: still being written
        code("loss = torch.log(F.softmax(z, dim=1))"),  # cell 4: uses cell 1's imports
    )))
    code_, out, _ = run_cli("--isolated", "half.ipynb")
    assert code_ == 1
    lines = out.splitlines()
    assert lines[0].startswith("half.ipynb:cell 2:line 1:col 5: NAN102")
    with pytest.raises(SyntaxError) as cpython:
        compile("def half_written(z:\n    return", "cell", "exec")
    where = f"line {cpython.value.lineno}:col {cpython.value.offset}"
    assert lines[1].startswith(f"half.ipynb:cell 3:{where}: NAN001 SyntaxError: {cpython.value.msg}")
    assert lines[2].startswith("half.ipynb:cell 4:line 1:col 8: NAN101")
    assert "Found 3 findings" in out
    # --fix fixes the cells that parse and leaves the broken one as written
    code_, out, _ = run_cli("--isolated", "--fix", "half.ipynb")
    cells = json.loads(p.read_text())["cells"]
    assert "".join(cells[1]["source"]) == "y = F.logsigmoid(x)"
    assert "".join(cells[2]["source"]) == "def half_written(z:\n    return"
    assert "log_softmax" in "".join(cells[3]["source"])


def test_file_directive_turns_off_broken_cell_nan001(run_cli, tmp_path):
    p = tmp_path / "q.ipynb"
    p.write_bytes(jupyter_bytes(notebook(code("# nanlint: noqa: NAN001\nimport torch"), code("def f(:\n"))))
    code_, out, _ = run_cli("--isolated", "q.ipynb")
    assert code_ == 0, out


@pytest.mark.parametrize("magic", ["%time ", "%timeit ", "%timeit -n 10 -r 3 ", "%timeit -n10 "])
def test_line_magics_wrapping_code_are_linted(run_cli, tmp_path, magic):
    p = tmp_path / "t.ipynb"
    nb = notebook(code("import torch\nimport torch.nn.functional as F"),
                  code(f"x = torch.randn(3)\n{magic}y = torch.log(torch.sigmoid(x))\nprint(y)"))
    p.write_bytes(jupyter_bytes(nb))
    code_, out, _ = run_cli("--isolated", "--format", "json", "t.ipynb")
    assert code_ == 1, out
    [f] = json.loads(out)
    assert f["code"] == "NAN102" and f["cell"] == 2
    col = len(magic) + 5  # columns are those of the cell as written
    assert f["location"] == {"row": 2, "column": col}
    assert f["fix"]["edits"][0]["location"] == {"row": 2, "column": col}
    code_, _, err = run_cli("--isolated", "--fix", "t.ipynb")
    assert code_ == 0, err
    source = json.loads(p.read_text())["cells"][1]["source"]
    assert source[1] == magic + "y = F.logsigmoid(x)\n"
    assert source[0] == "x = torch.randn(3)\n" and source[2] == "print(y)"


def test_wrapping_magics_only_at_a_statement_start():
    from nanlint.source.ipython import mask_magics

    wrapped = {}
    masked, magic = mask_magics("%time y = f(x)\n%timeit\ns = '''\n%time z = 1\n'''\n%load_ext x\n", wrapped)
    assert wrapped == {0: "%time "}
    assert sorted(magic) == [1, 5]  # bare %timeit is a magic; inside a string is text
    assert masked.splitlines()[0] == "y = f(x)"


@pytest.mark.parametrize("magic", ["%%time", "%%timeit -n 10", "%%timeit -n 10 -r 3", "%%capture out --no-stderr",
                                   "%%prun -s cumulative"])
def test_python_cell_magics_are_linted_and_fixed_the_magic_kept(run_cli, tmp_path, magic):
    p = tmp_path / "c.ipynb"
    nb = notebook(code("import torch"), MARKDOWN,
                  code(f"{magic}\nx = torch.randn(3)\ny = torch.log(torch.sigmoid(x))\nprint(y)", count=2))
    p.write_bytes(jupyter_bytes(nb))
    before = p.read_bytes()
    code_, out, _ = run_cli("--isolated", "--format", "json", "c.ipynb")
    assert code_ == 1, out
    [f] = json.loads(out)
    assert (f["code"], f["cell"], f["location"]) == ("NAN102", 3, {"row": 3, "column": 5})
    assert f["fix"]["edits"][0]["location"] == {"row": 3, "column": 5}
    code_, _, err = run_cli("--isolated", "--fix", "c.ipynb")
    assert code_ == 0, err
    assert p.read_bytes() == before.replace(b'"y = torch.log(torch.sigmoid(x))\\n"',
                                            b'"y = torch.nn.functional.logsigmoid(x)\\n"')
    assert json.loads(p.read_bytes())["cells"][2]["source"][0] == magic + "\n"


def test_an_import_a_fix_adds_goes_after_the_cell_magic(run_cli, tmp_path):
    p = tmp_path / "i.ipynb"
    p.write_bytes(jupyter_bytes(notebook(code("%%time\nfrom jax.nn import softmax\nimport jax.numpy as jnp\n"
                                              "y = jnp.log(softmax(z))"))))
    code_, _, err = run_cli("--isolated", "--fix", "i.ipynb")
    assert code_ == 0, err
    assert "".join(json.loads(p.read_bytes())["cells"][0]["source"]) == (
        "%%time\nimport jax\nfrom jax.nn import softmax\nimport jax.numpy as jnp\ny = jax.nn.log_softmax(z)")


def test_other_cell_magics_are_skipped_and_verbose_says_so(run_cli, tmp_path):
    p = tmp_path / "nb.ipynb"
    hazard = "y = torch.log(torch.sigmoid(x))"
    p.write_bytes(jupyter_bytes(notebook(
        code("import torch"), MARKDOWN, code(f"%%bash\npython -c '{hazard}'"),
        code(f"%%foo --bar\n{hazard}"), code(f"%%writefile helper.py\n{hazard}"), code(f"%%python3\n{hazard}"))))
    before = p.read_bytes()
    code_, out, err = run_cli("--isolated", "nb.ipynb")
    assert (code_, err) == (0, ""), out
    code_, out, err = run_cli("--isolated", "--verbose", "nb.ipynb")
    assert code_ == 0, out
    assert err.splitlines() == ["nb.ipynb: cell 3 skipped (%%bash: not Python)",
                                "nb.ipynb: cell 4 skipped (%%foo: unknown cell magic)",
                                "nb.ipynb: cell 5 skipped (%%writefile: not Python)",
                                "nb.ipynb: cell 6 skipped (%%python3: Python in another process)"]
    code_, _, err = run_cli("--isolated", "--fix", "-v", "nb.ipynb")
    assert code_ == 0 and "cell 3 skipped (%%bash: not Python)" in err
    assert p.read_bytes() == before
