# Excerpt of torchjd 0.2.1, torchjd/aggregation/imtl_g.py (licence: MIT License), verbatim:
# the module's imports, the module-level names the code uses, and the enclosing top-level definition.
import torch
from torch import Tensor
from .bases import _WeightedAggregator, _Weighting

class _IMTLGWeighting(_Weighting):
    """
    :class:`~torchjd.aggregation.bases._Weighting` that extracts weights as described in the
    definition of A_IMTLG of `Jacobian Descent For Multi-Objective Optimization
    <https://arxiv.org/pdf/2406.16232>`_.
    """

    def forward(self, matrix: Tensor) -> Tensor:
        d = torch.linalg.norm(matrix, dim=1)

        try:
            alpha_star = torch.linalg.pinv(matrix @ matrix.T) @ d
        except RuntimeError:  # This can happen when the matrix has extremely large values
            alpha_star = torch.ones(matrix.shape[0], device=matrix.device, dtype=matrix.dtype)

        alpha_star_sum = alpha_star.sum()
        if alpha_star_sum.abs() < 1e-12:
            weights = torch.zeros_like(alpha_star)
        else:
            weights = alpha_star / alpha_star_sum

        return weights
