"""Sending: the one sender and failure policy (delivery), the loop that sends track
alerts, follows and digests each tick (delivery_loop), and its pacing (pacer).

bot/sending may import (mapwatch/layers.py): store/, bot/rendering, bot/interactions.py.
Interactions, for to_embed: one rule for every embed sent."""
