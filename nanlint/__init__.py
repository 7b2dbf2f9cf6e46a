"""nanlint: find and fix NaN/Inf hazards in ML training code before the run."""

__version__ = "0.1.0"
