"""Engines run the selected tests: the native one runs winsuite's pytest cases."""
