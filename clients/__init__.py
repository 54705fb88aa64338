"""Clients of the Yahtzee service: library, bot, terminal UI, web page. Depends on `protocol`."""
