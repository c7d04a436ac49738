"""Decks: the lecture as ordered scenes with talking points, a presenter view and a handout."""
