"""Helpers tests use, grouped by object kind and named in kubectl words; every wait watches with a deadline."""
