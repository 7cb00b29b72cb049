"""Rendering, pure: answers and deliveries -> text and embed data within Discord's
limits (text: clipping, escaping, safe links), and pictures (plot, Agg).

bot/rendering may import (mapwatch/layers.py): store/*.py, store/pages, store/questions,
store/scholarly, store/subscriptions, feeds/*.py. Feeds, as the charts are drawn once for
the web and the bot; no database, no fetching, no discord, not the sending loop."""
