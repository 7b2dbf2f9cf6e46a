"""kornia rotation_matrix_to_quaternion of a 180-degree rotation (trace = -1), float32, with
the gradient (kornia issue #1653's own reproducer)."""
import torch


def _r2q(rotation_matrix, trace_eps, eps=1e-8):
    def safe_zero_division(numerator, denominator):
        return numerator / torch.clamp(denominator, min=torch.finfo(numerator.dtype).tiny)

    m00, m01, m02, m10, m11, m12, m20, m21, m22 = torch.chunk(rotation_matrix.view(*rotation_matrix.shape[:-2], 9), chunks=9, dim=-1)
    trace = m00 + m11 + m22

    def trace_positive_cond():
        sq = torch.sqrt(trace + 1.0 + trace_eps) * 2.0  # 0.6.4: torch.sqrt(trace + 1.0) * 2.0
        return torch.cat((0.25 * sq, safe_zero_division(m21 - m12, sq), safe_zero_division(m02 - m20, sq), safe_zero_division(m10 - m01, sq)), dim=-1)

    def cond_1():
        sq = torch.sqrt(1.0 + m00 - m11 - m22 + eps) * 2.0
        return torch.cat((safe_zero_division(m21 - m12, sq), 0.25 * sq, safe_zero_division(m01 + m10, sq), safe_zero_division(m02 + m20, sq)), dim=-1)

    def cond_2():
        sq = torch.sqrt(1.0 + m11 - m00 - m22 + eps) * 2.0
        return torch.cat((safe_zero_division(m02 - m20, sq), safe_zero_division(m01 + m10, sq), 0.25 * sq, safe_zero_division(m12 + m21, sq)), dim=-1)

    def cond_3():
        sq = torch.sqrt(1.0 + m22 - m00 - m11 + eps) * 2.0
        return torch.cat((safe_zero_division(m10 - m01, sq), safe_zero_division(m02 + m20, sq), safe_zero_division(m12 + m21, sq), 0.25 * sq), dim=-1)

    where_2 = torch.where(m11 > m22, cond_2(), cond_3())
    where_1 = torch.where((m00 > m11) & (m00 > m22), cond_1(), where_2)
    return torch.where(trace > 0.0, trace_positive_cond(), where_1)


def _run(trace_eps):
    R = torch.tensor([[1.0, 0, 0], [0, -1.0, 0], [0, 0, -1.0]], dtype=torch.float32, requires_grad=True)
    q = _r2q(R, trace_eps)
    (grad,) = torch.autograd.grad(q.sum(), R)
    return q, grad


def parent():
    return _run(trace_eps=0.0)


def fixed():
    return _run(trace_eps=1e-8)
