"""The bot's subscriptions in the database: tracked papers and their alerts,
followed directions and their news, daily and weekly digests, and the bot's
state (sending markers, refusal counts, page-button state).

May import: the store's top, pages, database, questions. Nothing of sources
(tests/system/test_package.py)."""
