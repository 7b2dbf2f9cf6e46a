"""Fixes keep the user's aliases, carry axis arguments and formatting, add an
import only when none can spell the target, and reach a fixpoint."""

import textwrap

import pytest

from conftest import fix


@pytest.mark.parametrize("before,after", [
    ("import tensorflow as tf\ny = tf.log(tf.nn.softmax(z, axis=1))\n",
     "import tensorflow as tf\ny = tf.nn.log_softmax(z, axis=1)\n"),
    ("import tensorflow as tf\ny = tf.log(tf.nn.softmax(z, 1))\n",
     "import tensorflow as tf\ny = tf.nn.log_softmax(z, 1)\n"),
    ("import tensorflow.compat.v1 as tf1\ny = tf1.log(tf1.nn.softmax(z, dim=1))\n",
     "import tensorflow.compat.v1 as tf1\ny = tf1.nn.log_softmax(z, dim=1)\n"),
    ("from tensorflow.math import log as ln\nimport tensorflow as tf\ny = ln(tf.math.softmax(z))\n",
     "from tensorflow.math import log as ln\nimport tensorflow as tf\ny = tf.nn.log_softmax(z)\n"),
    ("from torch.nn import functional as F\nimport torch\ny = torch.log(F.softmax(z, dim=-1))\n",
     "from torch.nn import functional as F\nimport torch\ny = F.log_softmax(z, dim=-1)\n"),
    ("import torch\ny = torch.log(torch.softmax(z, 1))\n",
     "import torch\ny = torch.log_softmax(z, 1)\n"),
    ("import torch\ny = z.softmax(dim=-1).log()\n",
     "import torch\ny = z.log_softmax(dim=-1)\n"),
    ("import torch\ny = torch.log(z.softmax(-1))\n",
     "import torch\ny = z.log_softmax(-1)\n"),
    ("import jax.numpy as jnp\nfrom jax import nn\ny = jnp.log(nn.softmax(z, axis=0))\n",
     "import jax.numpy as jnp\nfrom jax import nn\ny = nn.log_softmax(z, axis=0)\n"),
    ("from keras import ops\ny = ops.log(ops.softmax(z, axis=-1))\n",
     "from keras import ops\ny = ops.log_softmax(z, axis=-1)\n"),
])
def test_alias_preserving_fix(before, after):
    assert fix(before, unsafe=False) == after


def test_import_added_only_when_nothing_can_spell_the_target():
    before = "from jax.numpy import log\nfrom jax.nn import sigmoid\ny = log(sigmoid(z))\n"
    after = "from jax.numpy import log\nfrom jax.nn import sigmoid\nimport jax\ny = jax.nn.log_sigmoid(z)\n"
    assert fix(before) == after
    # with `jax` imported, no import is added
    before = "import jax\nimport jax.numpy as jnp\ny = jnp.log(jax.nn.sigmoid(z))\n"
    assert fix(before) == "import jax\nimport jax.numpy as jnp\ny = jax.nn.log_sigmoid(z)\n"


def test_torch_prefers_short_alias():
    before = "import torch\nimport torch.nn.functional as F\ny = torch.log(1 - torch.sigmoid(z))\n"
    assert fix(before) == "import torch\nimport torch.nn.functional as F\ny = F.logsigmoid(-z)\n"


def test_negation_parenthesizes_compound_arguments():
    before = "import tensorflow as tf\ny = tf.math.log(1. - tf.sigmoid(a + b))\n"
    assert fix(before) == "import tensorflow as tf\ny = tf.math.log_sigmoid(-(a + b))\n"
    before = "import tensorflow as tf\ny = tf.math.log(1 - tf.sigmoid(-a))\n"
    assert fix(before) == "import tensorflow as tf\ny = tf.math.log_sigmoid(a)\n"


def test_formatting_and_comments_outside_the_fix_are_kept():
    before = (
        "import torch  # the framework\n"
        "\n"
        "\n"
        "def loss(z,y):   # odd spacing stays\n"
        "    out = torch.log(\n"
        "        torch.softmax(z,  # logits\n"
        "                      dim=1)\n"
        "    )\n"
        "    return (y*out).sum( )\n"
    )
    after = fix(before)
    assert after.splitlines()[:4] == before.splitlines()[:4]
    assert after.splitlines()[-1] == before.splitlines()[-1]
    # the replaced call's line breaks and its comment stay; the arguments line up under the first
    assert "    out = torch.log_softmax(\n        z,  # logits\n        dim=1\n    )\n" in after


def test_parenthesized_expression_keeps_its_parentheses():
    before = "import torch\ny = 2 * (torch.log(torch.softmax(z, 1)))\n"
    assert fix(before) == "import torch\ny = 2 * (torch.log_softmax(z, 1))\n"


def test_tf_name_argument_is_dropped_and_nested_fixes_reach_a_fixpoint():
    before = ("import tensorflow as tf\n"
              "y = tf.math.log(tf.nn.softmax(tf.math.log(tf.nn.softmax(z, name='a')), axis=-1))\n")
    after = fix(before)
    assert after == "import tensorflow as tf\ny = tf.nn.log_softmax(tf.nn.log_softmax(z), axis=-1)\n"
    assert fix(after) == after


def test_safe_fix_skips_unsafe():
    src = "import tensorflow as tf\np = tf.nn.softmax(z)\ny = tf.math.log(p)\n"
    assert fix(src, unsafe=False) == src
    assert fix(src, unsafe=True) == "import tensorflow as tf\np = tf.nn.softmax(z)\ny = tf.nn.log_softmax(z)\n"


def test_every_fix_is_idempotent_on_the_rule_pages():
    from nanlint.lint import catalogue

    for page in catalogue.pages().values():
        for block in page.blocks():
            once = fix(block.code)
            assert fix(once) == once, f"{page.code} {block.label}"


def test_multi_line_call_keeps_its_line_breaks_and_indentation():
    source = """\
        import torch


        def loss(logits, shift):
            return torch.log1p(
                torch.exp(
                    logits * 2.0
                    - shift
                )
            )
        """
    assert fix(source) == textwrap.dedent("""\
        import torch


        def loss(logits, shift):
            return torch.nn.functional.softplus(
                logits * 2.0
                - shift
            )
        """)


def test_multi_line_call_with_several_arguments_and_a_trailing_comma():
    source = """\
        import torch


        def loss(z):
            out = torch.log(
                torch.softmax(
                    z,
                    dim=1,
                ),
            )
            return out
        """
    assert fix(source) == textwrap.dedent("""\
        import torch


        def loss(z):
            out = torch.log_softmax(
                z,
                dim=1,
            )
            return out
        """)


def test_multi_line_fix_edits_shown_as_they_are_applied():
    """The edit a finding carries (--diff, JSON, the language server) has the same layout."""
    from conftest import lint

    source = "import torch\n\nx = torch.log(\n    torch.sigmoid(\n        a\n        + b\n    )\n)\n"
    [finding] = lint(source)
    assert finding.edits[0].content == "torch.nn.functional.logsigmoid(\n    a\n    + b\n)"


def test_one_line_calls_stay_one_line():
    assert fix("import torch\ny = torch.log(torch.sigmoid(x))\n") == \
        "import torch\ny = torch.nn.functional.logsigmoid(x)\n"
