"""pytorch-msssim MS-SSIM of anti-correlated images: a level's cs is negative and
cs ** weight (a fractional weight) is nan."""
import torch
import torch.nn.functional as F

torch.manual_seed(0)
X = torch.rand(1, 1, 192, 192)
Y = 1.0 - X  # anti-correlated: sigma12 < 0 at every scale
weights = torch.tensor([0.0448, 0.2856, 0.3001, 0.2363, 0.1333])


def _win(size=11, sigma=1.5):
    coords = torch.arange(size, dtype=torch.float) - size // 2
    g = torch.exp(-(coords ** 2) / (2 * sigma ** 2))
    g = g / g.sum()
    return (g[:, None] * g[None, :])[None, None]


def _ssim(X, Y, data_range=1.0, K=(0.01, 0.03)):
    win = _win()
    C1, C2 = (K[0] * data_range) ** 2, (K[1] * data_range) ** 2
    f = lambda t: F.conv2d(t, win)
    mu1, mu2 = f(X), f(Y)
    sigma1_sq = f(X * X) - mu1 ** 2
    sigma2_sq = f(Y * Y) - mu2 ** 2
    sigma12 = f(X * Y) - mu1 * mu2
    cs_map = (2 * sigma12 + C2) / (sigma1_sq + sigma2_sq + C2)
    ssim_map = ((2 * mu1 * mu2 + C1) / (mu1 ** 2 + mu2 ** 2 + C1)) * cs_map
    return ssim_map.flatten(2).mean(-1), cs_map.flatten(2).mean(-1)


def _levels(relu):
    x, y, mcs = X, Y, []
    for i in range(len(weights)):
        ssim_per_channel, cs = _ssim(x, y)
        if i < len(weights) - 1:
            mcs.append(torch.relu(cs) if relu else cs)
            x, y = F.avg_pool2d(x, 2), F.avg_pool2d(y, 2)
    return mcs, ssim_per_channel


def parent():
    mcs, ssim_val = _levels(relu=False)
    mcs = torch.stack(mcs, dim=0)
    msssim_val = torch.prod((mcs ** weights[:-1].view(-1, 1, 1))
                            * (ssim_val ** weights[-1]), dim=0)
    return msssim_val


def fixed():
    mcs, ssim_per_channel = _levels(relu=True)
    ssim_per_channel = torch.relu( ssim_per_channel ) # (batch, channel)
    mcs_and_ssim = torch.stack( mcs+[ssim_per_channel], dim=0 ) # (level, batch, channel)
    ms_ssim_val = torch.prod( mcs_and_ssim ** weights.view(-1, 1, 1), dim=0 )
    return ms_ssim_val
