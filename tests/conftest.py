"""Shared test set-up: Hypothesis profiles and the import path of tests/strategies.py.

Profiles: ``ci`` (small, for CI), ``dev`` (default), ``thorough`` (the issue
targets: thousands of examples), chosen with ``HYPOTHESIS_PROFILE``.
"""

from __future__ import annotations

import os
import sys

from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(__file__))

_COMMON = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
}
settings.register_profile("ci", max_examples=150, **_COMMON)
settings.register_profile("dev", max_examples=300, **_COMMON)
settings.register_profile("thorough", max_examples=3000, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
