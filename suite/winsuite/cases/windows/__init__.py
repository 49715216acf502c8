"""Tier 3 (Windows-specific) and the API-compatibility checks of seed 002."""
