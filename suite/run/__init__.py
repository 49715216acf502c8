"""The controller of `winsuite run`: phases, progress, summary, results and engines."""
