"""bench/month.py's reading of a webhook delivery received twice: a repeat is allowed only as
docs/bot.md ("Webhooks") says a kill may cause one (first at a killed tick, once more later)."""

from __future__ import annotations

from bench.month import resent_after_kill


def test_a_delivery_repeated_after_a_killed_tick_is_the_documented_resend() -> None:
    ticks = {("2412.00001", "2501.00001"): [9, 10]}
    assert resent_after_kill(ticks, killed={9}) == {("2412.00001", "2501.00001")}


def test_other_repeats_stay_defects() -> None:
    pair = ("2412.00001", "2501.00001")
    assert resent_after_kill({pair: [9, 10]}, killed={10}) == set()  # the kill came after both
    assert resent_after_kill({pair: [9, 10]}, killed=set()) == set()  # no kill at all
    assert resent_after_kill({pair: [9, 9]}, killed={9}) == set()  # twice within the killed tick
    assert resent_after_kill({pair: [9, 10, 11]}, killed={9}) == set()  # more than one resend
    assert resent_after_kill({pair: [9]}, killed={9}) == set()  # once is not a repeat
