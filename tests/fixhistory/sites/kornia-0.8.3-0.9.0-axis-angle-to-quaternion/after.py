# Excerpt of kornia 0.9.0, kornia/geometry/conversions.py (licence: Apache-2.0), verbatim:
# the module's imports, the module-level names the code uses, and the enclosing top-level definition.
from __future__ import annotations
import math
import warnings
from typing import Optional
import torch
import torch.nn.functional as F
from kornia.core._compat import deprecated
from kornia.core.check import KORNIA_CHECK, KORNIA_CHECK_SHAPE, ShapeError, are_checks_enabled
from kornia.core.exceptions import TypeCheckError
from kornia.core.ops import _constant_tensor
from kornia.core.utils import _inverse_3x3_closed_form, _torch_inverse_cast, is_compiling

def axis_angle_to_quaternion(axis_angle: torch.Tensor) -> torch.Tensor:
    r"""Convert an axis angle to a quaternion.

    The quaternion vector has components in (w, x, y, z) format.

    Adapted from ceres C++ library: ceres-solver/include/ceres/rotation.h

    Convention:
        - the input is the rotation axis scaled by the angle in **radians**,
          shape :math:`(*, 3)`; the output is ``(w, x, y, z)`` with
          ``w = cos(theta / 2)``, shape :math:`(*, 4)` (see
          :func:`~kornia.geometry.conversions.quaternion_to_rotation_matrix`
          for the layout)
        - nothing is canonicalised, so ``theta > pi`` returns the ``w < 0`` half
          of the double cover: ``[2 * pi, 0., 0.]`` gives ``[-1., 0., 0., 0.]``
        - the round trip with
          :func:`~kornia.geometry.conversions.quaternion_to_axis_angle` holds
          to roundoff for ``0 <= theta <= pi``
        - ``angle_axis_to_quaternion`` is the deprecated alias of this function
          since 0.7.0
        - an integral or boolean input is **promoted**, not rejected: the
          ``sqrt`` on the way in already produces a floating tensor, and the
          output is allocated from that rather than from the input, so the
          result comes back at the ambient default floating dtype
        - differentiable at the zero rotation. The ``sqrt`` whose derivative is
          unbounded there never sees its zero radicand, so the gradient is the
          analytic limit of the surrounding map rather than ``nan``. The guard
          is elementwise, and away from zero it moves no forward bit

    Args:
        axis_angle: tensor with axis angle in radians.

    Return:
        tensor with quaternion.

    Shape:
        - Input: :math:`(*, 3)` where `*` means, any number of dimensions
        - Output: :math:`(*, 4)`

    Example:
        >>> axis_angle = torch.tensor((0., 1., 0.))
        >>> axis_angle_to_quaternion(axis_angle)
        tensor([0.8776, 0.0000, 0.4794, 0.0000])

    """
    if not isinstance(axis_angle, torch.Tensor):
        raise TypeError(f"Input type is not a torch.Tensor. Got {type(axis_angle)}")

    if not axis_angle.shape[-1] == 3:
        raise ValueError(f"Input must be a tensor of shape Nx3 or 3. Got {axis_angle.shape}")

    # unpack input and compute conversion
    a0: torch.Tensor = axis_angle[..., 0:1]
    a1: torch.Tensor = axis_angle[..., 1:2]
    a2: torch.Tensor = axis_angle[..., 2:3]
    theta_squared: torch.Tensor = a0 * a0 + a1 * a1 + a2 * a2

    mask: torch.Tensor = theta_squared > 0.0

    # the sqrt and the division below are only taken where the radicand is non zero. the inner
    # `where` keeps the zero rotation away from the sqrt so its backward pass stays finite.
    safe_theta_squared: torch.Tensor = torch.where(mask, theta_squared, torch.ones_like(theta_squared))
    theta: torch.Tensor = torch.where(mask, torch.sqrt(safe_theta_squared), torch.zeros_like(theta_squared))
    half_theta: torch.Tensor = theta * 0.5

    ones: torch.Tensor = torch.ones_like(half_theta)

    k_neg: torch.Tensor = 0.5 * ones
    k_pos: torch.Tensor = torch.sin(half_theta) / torch.where(mask, theta, ones)
    k: torch.Tensor = torch.where(mask, k_pos, k_neg)
    w: torch.Tensor = torch.where(mask, torch.cos(half_theta), ones)

    # the output dtype comes from the computed values, not from the input: an integer input is
    # promoted to floating point by the sqrt above, and writing that back into an integer buffer
    # would truncate every component to zero.
    quaternion: torch.Tensor = torch.zeros(size=(*axis_angle.shape[:-1], 4), dtype=w.dtype, device=axis_angle.device)
    quaternion[..., 1:2] = a0 * k
    quaternion[..., 2:3] = a1 * k
    quaternion[..., 3:4] = a2 * k
    quaternion[..., 0:1] = w
    return quaternion
