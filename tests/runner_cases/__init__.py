"""Deliberate outcomes for testing `winsuite run` itself: pass, failure, flake, skip, slow and serial tests."""
