# Excerpt of torchjd 0.2.0, torchjd/aggregation/imtl_g.py (licence: MIT License), verbatim:
# the module's imports, the module-level names the code uses, and the enclosing top-level definition.
import torch
from torch import Tensor
from torch.linalg import LinAlgError
from .bases import _WeightedAggregator, _Weighting

class _IMTLGWeighting(_Weighting):
    """
    :class:`~torchjd.aggregation.bases._Weighting` that extracts weights using a method which is
    a generalization of the method described in `Towards Impartial Multi-task Learning
    <https://discovery.ucl.ac.uk/id/eprint/10120667/>`_, supporting non-linearly independent rows
    of the matrix.
    """

    def forward(self, matrix: Tensor) -> Tensor:
        d = torch.linalg.norm(matrix, dim=1)

        try:
            raw_weights = torch.linalg.pinv(matrix @ matrix.T) @ d
        except LinAlgError:  # This can happen when the matrix has extremely large values
            raw_weights = torch.ones(matrix.shape[0], device=matrix.device, dtype=matrix.dtype)

        weights = raw_weights / raw_weights.sum()
        return weights
