"""Which side of a loss a target is on (issue 21): a BCE of a sigmoid against a target of
ones evaluates only log(p), exact far below 0 (the may tier); against zeros only log(1 - p),
which saturates from ~16.6 (reported by default); any other target both."""

import textwrap

import pytest

from conftest import lint

SOURCE = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = nn.Sequential(nn.Linear(784, 1), nn.Sigmoid())

        def forward(self, img):
            return self.model(img)

    discriminator = Discriminator()
    adversarial_loss = torch.nn.BCELoss()

    def step(imgs, gen_imgs, n):
        valid = torch.ones(n, 1)
        fake = torch.zeros(n, 1)
        smooth = torch.full((n, 1), 0.9)
        label = torch.empty(n, 1)
        label.fill_(1.0)
        g_loss = adversarial_loss(discriminator(gen_imgs), valid)
        real_loss = adversarial_loss(discriminator(imgs), smooth)
        fake_loss = adversarial_loss(discriminator(gen_imgs.detach()), fake)
        other = adversarial_loss(discriminator(imgs), label)
        return g_loss, real_loss, fake_loss, other
    """)
LINE = {line.split("=")[0].strip(): i for i, line in enumerate(SOURCE.splitlines(), 1) if "adversarial_loss(" in line}


def by_line(may):
    return {f.start[0]: f for f in lint(SOURCE, may=may) if f.code == "NAN104"}


def test_a_target_of_ones_is_the_may_tier():
    assert LINE["g_loss"] not in by_line(False)
    f = by_line(True)[LINE["g_loss"]]
    assert f.may and "against a target of ones (`valid` is assigned on line 17): only log(p)" in f.message


def test_a_target_of_zeros_reports_the_side_it_evaluates():
    f = by_line(False)[LINE["fake_loss"]]
    assert not f.may and "against a target of zeros" in f.message and "only log(1 - p)" in f.message
    assert "z > ~16.6" in f.message and "~-88.7" not in f.message  # only its own side's threshold


@pytest.mark.parametrize("name", ["real_loss", "other"])  # label smoothing 0.9; a target changed in place
def test_any_other_target_states_both_sides(name):
    f = by_line(False)[LINE[name]]
    assert not f.may and "on a target of 0" in f.message and "on a target of 1" in f.message


def test_the_sides_in_torch():
    """The numbers the messages state, in the real framework: against zeros the loss is the
    clamp 100 with no gradient from z ~16.6; against ones it is exact at z = -20."""
    torch = pytest.importorskip("torch")
    bce = torch.nn.BCELoss()

    def loss_and_grad(z, t):
        z = torch.tensor([z], requires_grad=True)
        loss = bce(torch.sigmoid(z), torch.full((1,), t))
        loss.backward()
        return loss.item(), z.grad.item()

    assert loss_and_grad(16.0, 0.0)[0] == pytest.approx(16.0, rel=1e-2)  # 1 - p near its last float32 bits
    assert loss_and_grad(17.0, 0.0) == (100.0, 0.0)  # saturated: the loss is the clamp, no gradient
    loss, grad = loss_and_grad(-20.0, 1.0)
    assert loss == pytest.approx(20.0, rel=1e-4) and grad == pytest.approx(-1.0, rel=1e-4)
