"""Tier 2 (substitute): [sig-windows] tests with the intent of a Linux-dependent conformance test."""
