"""The bot's subscriptions in the database: tracked papers and their alerts,
followed directions and their news, daily and weekly digests, and the bot's
state (sending markers, refusal counts, page-button state).

store/subscriptions may import (mapwatch/layers.py): store/*.py, store/pages, store/database,
store/questions."""
