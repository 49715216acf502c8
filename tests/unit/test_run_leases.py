"""A run's Lease is written and judged by the API server's clock: the time its answers carry (their Date header)."""

from __future__ import annotations

import datetime
import email.utils

from winsuite.k8s.run_leases import ServerClock
from winsuite.k8s.run_leases import server_time


def test_the_servers_time_is_its_date_header() -> None:
    assert server_time({"Date": "Sat, 28 Nov 2026 14:59:48 GMT"}) == datetime.datetime(
        2026, 11, 28, 14, 59, 48, tzinfo=datetime.UTC)
    assert server_time({}) is None and server_time(None) is None


def test_a_server_clock_keeps_the_offset_its_last_dated_answer_showed() -> None:
    clock = ServerClock()
    ahead = datetime.datetime.now(datetime.UTC) + datetime.timedelta(minutes=5)  # a server five minutes ahead
    clock.answered({"Date": email.utils.format_datetime(ahead, usegmt=True)})
    assert abs((clock.now() - ahead).total_seconds()) < 2
    clock.answered({"Content-Type": "application/json"})  # an answer without a date changes nothing
    assert abs((clock.now() - ahead).total_seconds()) < 2
