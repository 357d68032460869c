"""SASE+ (seed 002): its query form, the NFA^b, and the two-step baseline (spec §8)."""

from acel.reference.sase.two_step import NotInFragment, two_step_trend

__all__ = ["NotInFragment", "two_step_trend"]
