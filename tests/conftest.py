"""Shared test set-up: Hypothesis profiles, the import path of tests/strategies.py, the
``native_paths`` marker of CI's second pass, and the ``slow`` stage's properties.

Profiles: ``ci`` (small, for CI), ``dev`` (default), ``thorough`` (the issue
targets: thousands of examples), chosen with ``HYPOTHESIS_PROFILE``.

``native_paths`` marks the Hypothesis properties (``@given`` tests and tests that run
the conformance kit's ``assert_conforms``) that ``make test`` runs a second time
under ``ACEL_NATIVE=0`` (issue 23, papers/engine.md "Both paths in CI"): every
property of a test file that is neither Spark's nor in :data:`ONE_PATH`.  A new
property file therefore runs on both paths unless it is listed there.

``slow`` marks a Hypothesis property too long for the default suite (issue 37: ``make
test`` fits a small shared machine).  The default suite still runs it, on its first
examples (:func:`fast_examples`), so a regression it finds quickly still fails ``make
test``; ``--slow`` (``make test-slow``, CI's stage after ``make test``) runs it with the
profile's full count.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Generator, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, is_hypothesis_test, settings

sys.path.insert(0, os.path.dirname(__file__))

_COMMON: dict[str, Any] = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
}
settings.register_profile("ci", max_examples=150, derandomize=True, **_COMMON)  # CI: the same examples every run
settings.register_profile("dev", max_examples=300, **_COMMON)
settings.register_profile("thorough", max_examples=3000, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

ONE_PATH = frozenset({
    # measured (papers/engine.md "Both paths in CI"): no property here reaches a native
    # path, so ACEL_NATIVE=0 would run the very same code again
    "test_acea.py", "test_acea_simplify.py", "test_checker.py", "test_compiler_oracle.py",
    "test_compiler_rewrite.py", "test_compiler_size.py", "test_compiler_stress.py",
    "test_io_streaming.py", "test_lalr.py", "test_negation_oracle.py", "test_negation_sase.py",
    "test_oracle.py", "test_oracle_laws.py", "test_printer.py", "test_relate_compiler.py",
    "test_relate_language.py", "test_render_readable.py", "test_robustness.py",
    "test_sase_properties.py", "test_strategies.py", "test_testing_kit.py",
    # CORE and Flink against the oracle (and slow: installed on first use)
    "test_real_engines.py",
    # these compare both paths inside each example (they set ACEL_NATIVE themselves)
    "test_native_core.py", "test_native_enum.py", "test_native_reader.py",
    "test_native_writer.py", "test_native_truth.py",
})
"""Test files whose Hypothesis properties CI runs once (on the default path)."""

ONE_PATH_TESTS = frozenset({
    # measured per test (tools/native_probe.py on the second pass, ci profile; issue 37):
    # properties in files of both paths that took no native path in any example, 3 s or
    # more each; a cheaper one and any new property still run twice.  Re-measure before
    # adding one: a test whose examples reach the trend core, the C reader, writer or
    # walk must stay.  Together they were 47 % of the second pass.
    "test_counters.py::test_counted_per_match_queries_agree_with_oracle",
    "test_counters.py::test_counter_agrees_with_oracle",
    "test_engine_properties.py::test_engine_equals_naive_automaton",
    "test_engine_properties.py::test_engine_equals_oracle",
    "test_engine_properties.py::test_indexed_kleene_trends_equal_oracle",
    "test_engine_properties.py::test_start_positions_keep_starts_in_range",
    "test_engine_properties.py::test_within_on_attribute_matches_oracle",
    "test_idle_advance.py::test_quiet_moments_release_exactly_the_batch_complex_events",
    "test_negation_properties.py::test_middle_negation_oracle_naive_engine",
    "test_negation_properties.py::test_middle_negation_queries_on_the_engine",
    "test_negation_properties.py::test_top_negation_on_an_attribute_axis",
    "test_negation_properties.py::test_top_negation_queries_oracle_naive",
    "test_refusal_exempt.py::test_exempt_shape_agrees_with_the_oracle",
    "test_refusal_window.py::test_windowed_shape_agrees_with_the_oracle",
    "test_runner_advance.py::test_advancing_the_axis_releases_exactly_the_batch_complex_events",
    "test_runner_state.py::test_every_value_kind_round_trips",
    "test_runner_state.py::test_saved_and_restored_runs_equal_the_batch_run",
    "test_sase_relate.py::test_sase_conforms_on_everything_it_declares",
    "test_sase_relate.py::test_sase_relating_agrees_with_the_oracle",
    "test_ast_json.py::test_json_round_trip_equals_parsing_the_text",
    "test_selection.py::test_engines_agree_on_strategy_trends",
    "test_selection.py::test_sase_baseline_agrees_on_strategies",
    "test_selection.py::test_strategies_keep_a_subset_with_every_end",
    "test_strategies_within.py::test_next_and_last_under_within_equal_the_oracle",
    "test_streaming_keys.py::test_streamed_complex_events_equal_the_batch_run",
    "test_streaming_keys.py::test_streamed_complex_events_on_event_time_equal_the_batch_run",
    "test_workload_properties.py::test_prefix_workload_equals_queries_alone",
    "test_workload_properties.py::test_shareable_queries_do_share",
    "test_workload_properties.py::test_workload_equals_oracle",
})
"""Properties of two-path files that CI also runs once: ``file::test`` (without parameters)."""


def _one_path(item: pytest.Item) -> bool:
    """Whether ``item``'s property runs on the default path only (:data:`ONE_PATH`,
    :data:`ONE_PATH_TESTS`)."""
    name = getattr(item, "originalname", item.name)
    return item.path.name in ONE_PATH or f"{item.path.name}::{name}" in ONE_PATH_TESTS

_NOT_BUILT = "not built"
"""Words of the skip reason of a test that needs a native extension (tests/test_native_*.py)."""


FAST_SHARE = 10
"""A ``slow`` property runs a tenth of its examples in the default suite (without ``--slow``)."""


def fast_examples(count: int) -> int:
    """Examples of a ``slow`` property of ``count`` in the default suite: a tenth, at least
    two (a Spark property of 12 runs 2, one of the ``ci`` profile's 150 runs 15)."""
    return min(count, max(2, count // FAST_SHARE))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true",
                     help="run the slow properties with the profile's full example count (make test-slow)")


MAX_WORKERS = 4
"""``-n auto`` (``make test``) runs at most this many workers: each holds its own Spark
session (a JVM of up to 2 GB) once a Spark test reaches it."""


def workers(cpus: int | None, asked: str | None) -> int:
    """Workers for ``-n auto``: ``PYTEST_WORKERS`` (``asked``) if set, else one per core
    (``cpus``), at most :data:`MAX_WORKERS`; 0 (one process, no workers) where that is 1."""
    if not asked or not asked.strip():
        count = min(cpus or 1, MAX_WORKERS)
    elif asked.strip().isdigit() and int(asked) >= 1:
        count = int(asked)
    else:
        raise pytest.UsageError(f"PYTEST_WORKERS={asked}: give a number of workers, 1 or more")
    return 0 if count == 1 else count


def usable_cpus() -> int | None:
    """The cores this process may run on (its CPU affinity: a container or ``taskset``
    limit), not the machine's count, which ``os.cpu_count`` gives."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count()


@pytest.hookimpl(optionalhook=True)  # without pytest-xdist (or -p no:xdist) no such hook exists
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (issue 37: ``make test`` on both cores of a small machine); see :func:`workers`."""
    return workers(usable_cpus(), os.environ.get("PYTEST_WORKERS"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "native_paths: a Hypothesis property CI also runs with ACEL_NATIVE=0 (conftest.py)"
    )


def _is_property(item: pytest.Item) -> bool:
    """A Hypothesis test: ``@given``, or a test that runs the conformance kit
    (``assert_conforms`` drives Hypothesis inside, e.g. engine == oracle)."""
    if not isinstance(item, pytest.Function):
        return False
    code = getattr(item.function, "__code__", None)
    return is_hypothesis_test(item.obj) or (code is not None and "assert_conforms" in code.co_names)


def shorten(test: Any) -> None:
    """Run the ``@given`` test ``test`` on its first :func:`fast_examples` only,
    keeping its other settings (Hypothesis reads them from this attribute at call time)."""
    own: settings = getattr(test, "_hypothesis_internal_use_settings", None) or settings()
    test._hypothesis_internal_use_settings = settings(own, max_examples=fast_examples(own.max_examples))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the properties of CI's second pass (``native_paths``, see the module docstring);
    without ``--slow``, shorten the ``slow`` ones."""
    for item in items:
        if (item.get_closest_marker("slow") is not None and not config.getoption("slow")
                and isinstance(item, pytest.Function) and is_hypothesis_test(item.obj)):
            shorten(item.obj)
        if (_is_property(item)
                and item.get_closest_marker("spark") is None
                and item.get_closest_marker("cluster") is None
                and not _one_path(item)):
            item.add_marker(pytest.mark.native_paths)


def _loud(report: pytest.TestReport | pytest.CollectReport) -> None:
    """Under ``ACEL_NATIVE=1``, and in CI unless ``ACEL_NATIVE=0``, a test (or test file)
    skipped because a native extension is not built fails instead: that setting, and CI,
    insist on the native paths (issue 23)."""
    from acel.io.native_switch import mode

    strict = mode() == "on" or (os.environ.get("CI") == "true" and mode() != "off")
    if not report.skipped or not strict:
        return
    reason = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
    if _NOT_BUILT in reason or ("could not import 'acel." in reason and "_native" in reason):
        report.outcome = "failed"
        setting = "ACEL_NATIVE=1" if mode() == "on" else "CI=true"
        report.longrepr = f"{setting} but {reason.removeprefix('Skipped: ')}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    """See :func:`_loud`."""
    outcome = yield
    _loud(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, None]:
    """See :func:`_loud` (``pytest.importorskip`` of an extension skips a whole file)."""
    outcome = yield
    _loud(outcome.get_result())


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One Spark session for the whole run (one JVM holds one SparkContext).

    ``local[2,2]``: two cores, and a failed task is retried once (the fault test).
    Code under test that asks for the active session (the command line) gets it.
    """
    from acel.spark_backend import get_session

    yield get_session("local[2,2]", shuffle_partitions=2)


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A Spark standalone master and one worker (2 cores) on 127.0.0.1, for the whole run.

    Started only when a test asks for it (about 10 s), stopped at the end of
    the run whatever happened, with every process of both daemons (see
    ``tests/spark_cluster.py``).  Its drivers run as subprocesses: this
    process already holds the ``local[2,2]`` session above.
    """
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java")
    from spark_cluster import standalone_cluster

    with standalone_cluster(tmp_path_factory.mktemp("spark-cluster")) as cluster:
        yield cluster
