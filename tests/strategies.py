"""The Hypothesis strategies now live in the package: :mod:`acel.testing.strategies`.

This module re-exports them for tests written against the old path; new tests
import ``acel.testing`` (the public conformance kit) directly.
"""

from acel.testing.strategies import *  # noqa: F403
