# ruff: noqa: E501  (prose, one command a line)
"""What each Discord command answers, for the command table of docs/bot.md.

The first column of that table (each command's name and options) comes from the command specs
(`mapwatch.bot.commands.commands()`, the one declaration the bot and `mapwatch ask` are built
from): docs/gen/bot_reference.py. Every command there must have its entry here, and no entry
may name a command that does not exist: the generator refuses otherwise, so `cog --check`
fails in CI until a new command is described here. The table lists the commands in this order.
"""

from __future__ import annotations

# command name (a message menu: its spec name): what it answers, Markdown
ANSWERS: dict[str, str] = {
    'paper': "the paper's card: title linked to its map page, arXiv link, first posted, its authors with their institutions and its venue (where [known](#authors-self-citations-and-citing-sentences)), cited by M (data through D), builds on R of its T references, directions, top citers and references, the abstract (trimmed), its feed; with two or more stored snapshots, a chart of its cited-by count over them",
    'citers': 'its citing papers, most cited first (`cited`) or newest first (`newest`), optionally only those placed in a direction; paged with buttons',
    'refs': 'the papers it builds on, paged',
    'search': 'full-text search over titles and abstracts (words, any syntax is taken literally), and author names: a query that is an author\'s whole name (any case), their surname alone ("Halvorsen") or with given names or initials before it ("I. Halvorsen", or "Halvorsen, I.") lists the matching authors\' papers first, newest first (a single word in capitals, such as "GAN", is taken for an acronym, not a surname); autocomplete offers authors by the start of their name; paged: papers holding every word, best bm25 match first among the newest 300 matches; bm25 weighs the words whose matches add up to at most 20,000, the rarest first, and a more common word only selects (a word in most papers weighs nearly nothing in bm25 anyway); when even the rarest word is that common (e.g. "learning model" on a large map), those with every word in the title first, then the most cited; counted up to "2,000 or more" (`store/questions/search.py`)',
    'direction': "the direction's most cited papers, its papers by PageRank within the direction (stored at each refresh), its newest citing papers, its feed",
    'directions': 'every direction, grouped by area, with paper counts',
    'track': "this channel gets an alert when the paper gains citers (needs Manage Channels); with `author` (an ORCID, an OpenAlex author id or a name) when any of that person's papers does, with `team` when any paper of one of this server's teams does, one entry per citing paper ([Following people and teams](#following-people-and-teams)); in a DM, alerts come to you by DM. `mode`: `instant` (the default), `daily` or `weekly` (see [Following and digests](#following-and-digests)); `role`: the one role the alerts mention; `threads`: `on` opens a discussion thread per alert; `channel`: post there instead (a text or forum channel, where you have Manage Channels too; in a forum each alert is a post: [Forum channels](#forum-channels-a-post-per-alert)); `self`: `hide` leaves out self-citations (a citing paper sharing an author with the paper; on a person's or a team's track, one sharing an author with every one of their papers it cites), `show` (the default) marks them",
    'untrack': "stop those alerts (a paper's, a person's or a team's), here or in `channel` (needs Manage Channels)",
    'team add': "add a person (ORCID, OpenAlex author id or name) or a paper to this server's team `name`, starting it when new (needs Manage Server)",
    'team remove': "remove a person (by id, or by a name only one of the team's people bears: a name several bear gets them listed with their ids, and removes nobody) or a paper from the team; with neither, the team itself once no channel tracks it (needs Manage Server)",
    'team list': "this server's teams: their people, papers and feed addresses",
    'follow': "this channel gets the direction's newly added citing papers (the entries of its feed), optionally only those whose title contains `keyword`; `mode`, `role`, `threads` (`on`/`off`) and `channel` as for `/track`; `self`: `hide` leaves out a citing paper whose every citation of the direction's papers is a self-citation, `show` (the default) marks it (needs Manage Channels)",
    'unfollow': 'stop following it here, or in `channel` (needs Manage Channels)',
    'digest-time': "the local hour (0-23) of this server's daily and weekly digests, in an IANA time zone (default `UTC`; needs Manage Channels)",
    'digest-preview': "what this channel's next digests would hold if they were sent now, and when they are due (only you see it)",
    'tracked': "this server's tracked papers, followed directions and tracked people and teams (in a DM: yours): what, channel, mode, since when, last delivery, why one was disabled, and its last delivery Discord refused for good; the footer counts the tracks by kind (\"3 tracks: 1 paper, 1 person, 1 team · 1 followed\")",
    'feed': 'the feed URL to paste into a reader, and the OPML link for all of them',
    'stats': 'map size, newest data-through date, last and next refresh',
    'related': 'the papers most like it, by co-citation and bibliographic coupling, each with its score and the shared papers named; `exclude_direct: yes` leaves out its direct citers and references (see [Graph questions](graph.md))',
    'path': 'the shortest citation chain between two papers, each step marked "A cites B" or "B is cited by C", or "no chain within 6 steps"',
    'rising': 'the papers that gained the most citers in the last `days` days (default 30)',
    'graph': 'a PNG of its citation neighbourhood (`depth` 1 to 3), as `mapwatch graph` draws it',
    'author': "a person's papers in the map, newest first, and the papers citing them, newest first (self-citations marked), by name (whole, or its start), ORCID iD or OpenAlex author id; a name several people share gets a list of them with their ids to pick from, never a guess; their papers are counted up to 5,000, and a person on more is said to be on \"5,000+ papers\" (\"at least 5,000\", with at least the citations of those; `/track author:` counts them all); autocompletes",
    'webhook': "a paper's, a person's (`author`) or a team's alerts or a direction's follows also go to a Discord webhook (`?thread_id=` for a forum post) or a Slack incoming webhook; without `url`, this server's webhooks; `remove` one by id. Needs Manage Webhooks; only you see the answer; the URL is stored sealed, never shown ([Webhooks](#webhooks-channels-without-the-bot-and-slack); `mapwatch webhook add` on the host)",
    'inmessage': 'cards of the papers a message names (arXiv links and ids, map links), only to you, paged; names the ids the map lacks. The read-only commands and this menu also work as a user-installed app: see [below](#install-it-in-a-server-or-for-yourself)',
}
