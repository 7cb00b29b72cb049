"""Sending: the one sender and failure policy (delivery), the loop that sends track
alerts, follows and digests each tick (delivery_loop), and its pacing (pacer).

May import: the store, bot.rendering, bot.interactions."""
