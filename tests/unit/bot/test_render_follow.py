"""Pure rendering of follow deliveries and digests: Discord's limits, escaping, the one role."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from mapwatch.bot.rendering import render_follow as rf
from mapwatch.store.questions.types import AlertCiter, PaperRef
from mapwatch.store.subscriptions.digests import Digest, DigestSection
from mapwatch.store.subscriptions.follows import Follow, FollowNews, Place

HOSTILE = "**@everyone** <@&999> <@123> [x](https://evil.example) `code` # head \x00\u202e " + "ü" * 20


def citer(i: int, title: str = "A Study", cited_by: int | None = None) -> AlertCiter:
    pid = f"2611.{i:05d}"
    return AlertCiter(pid, f"{title} {i}", 2026, f"https://mlsanity.com/paper/{pid}/", f"https://arxiv.org/abs/{pid}",
                      cited_by, 1000 + i, "2026-11-01T12:00:00+00:00",
                      (PaperRef("2412.10400", "Reinforcement Learning Enhanced LLMs: A Survey", 2024),))


def a_follow(**kw) -> Follow:
    base = dict(id=1, guild_id=10, channel_id=20, user_id=None, direction_slug="lr/rl",
                direction_name="Reinforcement learning for reasoning",
                direction_url="https://mlsanity.com/lr/reinforcement-learning-for-reasoning/", keyword=None,
                mode="instant", role_id=None, created_at="2026-11-01T12:00:00+00:00", created_by=5,
                last_event_id=0, last_delivery_at=None, disabled_reason=None)
    base.update(kw)
    return Follow(**base)  # type: ignore[arg-type]


def total(d: rf.Delivery) -> int:
    return sum(rf.embed_size(e) for e in d.embeds)


def within_limits(d: rf.Delivery) -> None:
    assert len(d.content) <= 2000 and len(d.embeds) <= 10 and total(d) <= 6000
    for e in d.embeds:
        assert len(e.title) <= 256 and len(e.description) <= 4096 and len(e.footer) <= 2048
        assert len(e.fields) <= 25
        assert all(len(f.name) <= 256 and 0 < len(f.value) <= 1024 for f in e.fields)


def mentions(text: str) -> list[str]:
    """Mentions Discord would parse: unescaped <@&id>, <@id>, @everyone, @here."""
    return re.findall(r"(?<!\\)(<@[&!]?\d+>|@everyone|@here)", text)


def all_text(d: rf.Delivery) -> str:
    parts = [d.content]
    for e in d.embeds:
        parts += [e.title, e.description, e.footer] + [f.name + f.value for f in e.fields]
    return "\n".join(parts)


def test_instant_alert_names_citers_and_mentions_only_the_chosen_role() -> None:
    news = FollowNews(a_follow(role_id=777, keyword="reward"), (citer(1), citer(2, cited_by=4)), 2, 50)
    d = rf.follow_alert(news)
    within_limits(d)
    assert d.role_ids == (777,)
    assert mentions(all_text(d)) == ["<@&777>"] and d.content.startswith("<@&777> ")
    e = d.embeds[0]
    assert e.title == "2 new citing papers in Reinforcement learning for reasoning"
    assert e.url == "https://mlsanity.com/lr/reinforcement-learning-for-reasoning/"
    assert "[A Study 1](https://mlsanity.com/paper/2611.00001/) (2026)" in e.description
    assert "cited by 4" in e.description and "cites Reinforcement Learning Enhanced LLMs" in e.description
    assert "“reward”" in e.footer
    no_role = rf.follow_alert(FollowNews(a_follow(), (citer(1),), 1, 50))
    assert no_role.role_ids == () and mentions(all_text(no_role)) == []


def test_hostile_titles_cannot_ping_or_format() -> None:
    news = FollowNews(a_follow(direction_name=HOSTILE, keyword=HOSTILE[:90]),
                      tuple(citer(i, HOSTILE) for i in range(3)), 3, 9)
    d = rf.follow_alert(news)
    within_limits(d)
    text = all_text(d)
    assert mentions(text) == [] and "\x00" not in text and "\u202e" not in text
    assert "[x](https://evil" not in text and r"\*\*" in text


def test_a_long_list_is_summarised_within_limits() -> None:
    many = tuple(citer(i, "T" * 300 + " " + HOSTILE) for i in range(10))
    d = rf.follow_alert(FollowNews(a_follow(role_id=1), many, 250, 9))
    within_limits(d)
    desc = d.embeds[0].description
    shown = desc.count("• ")
    assert 1 <= shown <= 10
    assert desc.endswith(f"… and {250 - shown} more")


def section(i: int, n: int, kind: str = "direction", role: int | None = None,
            title: str = "Direction") -> DigestSection:
    return DigestSection(kind, i, f"k{i}", f"{title} {i}", "https://mlsanity.com/x/", None, role, n,
                         tuple(citer(j, "Z" * 20, cited_by=100 - j) for j in range(min(n, 5))),
                         old_count=10 if kind == "paper" else None, new_count=10 + n if kind == "paper" else None)


def digest(sections: tuple[DigestSection, ...]) -> Digest:
    return Digest(Place(10, 20, None), "daily", "2026-11-02T09:00:00+00:00", 5, 90, sections,
                  tuple(s.item_id for s in sections if s.kind == "direction"),
                  tuple(s.item_id for s in sections if s.kind == "paper"))


def test_digest_lists_every_section_with_counts_and_roles() -> None:
    d = rf.digest_message(digest((section(1, 3, role=55), section(2, 12, "paper", role=66, title="Paper"),
                                  section(3, 1, role=55))))
    within_limits(d)
    assert d.role_ids == (55, 66) and mentions(all_text(d)) == ["<@&55>", "<@&66>"]
    assert d.content == ("<@&55> <@&66> Daily digest: 16 new citing papers across 2 followed directions"
                         " and 1 tracked paper")
    names = [f.name for f in d.embeds[0].fields]
    assert names == ["Paper: Paper 2 (12 new citers, cited by 10 → 22)", "Direction: Direction 1 (3 new citers)",
                     "Direction: Direction 3 (1 new citer)"]
    assert d.embeds[0].fields[0].value.endswith("… and 7 more")


def test_a_huge_digest_shrinks_to_fit_and_says_how_many_more() -> None:
    d = rf.digest_message(digest(tuple(section(i, 40, title=HOSTILE + "x" * 200) for i in range(60))))
    within_limits(d)
    fields = d.embeds[0].fields
    assert fields[-1].name.startswith("… and ") and fields[-1].name.endswith(" more")
    assert int(fields[-1].name.split()[2]) == 60 - (len(fields) - 1)
    assert mentions(all_text(d)) == []


def test_preview_is_ephemeral_and_says_when() -> None:
    at = datetime(2026, 11, 2, 9, tzinfo=UTC)
    r = rf.digest_preview([(digest((section(1, 2),)), at), (digest(()), at)])
    assert r.ephemeral and f"<t:{int(at.timestamp())}:f> (2026-11-02 09:00 UTC)" in r.content
    assert "nothing new so far" in r.content and len(r.embeds) == 1
    assert rf.digest_preview([]).content.startswith("This channel gets no digests")


def test_follow_lines_for_tracked() -> None:
    f = a_follow(keyword="reward", role_id=9, mode="daily", last_delivery_at="2026-11-03T09:00:01+00:00",
                 disabled_reason="the channel is gone (404 from Discord)")
    line = rf.follow_line(f)
    assert "<#20>" in line and "daily" in line and "“reward”" in line and "since 1 Nov 2026" in line
    assert "last delivery 3 Nov 2026" in line and "disabled: the channel is gone" in line
    assert mentions(line) == []  # the role is named, not mentioned
    field = rf.follows_field([f] * 40)
    assert field is not None and len(field.value) <= 1024 and field.value.endswith("more")
