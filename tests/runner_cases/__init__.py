"""Deliberate outcomes for testing `winsuite run` itself: a pass, a failure, a flake, a skip, a slow and a serial test."""
