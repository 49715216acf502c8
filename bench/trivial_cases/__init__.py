"""Trivial winsuite tests for bench/runner.py: each creates and reads back one ConfigMap."""
