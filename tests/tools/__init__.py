"""Maintenance tools for the project's own tests (golden files from upstream binaries)."""
