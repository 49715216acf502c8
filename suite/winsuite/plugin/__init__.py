"""The pytest side: wiring, hooks, collection, requirements, flakes, timeouts, fixtures, session."""
