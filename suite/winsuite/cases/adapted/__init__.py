"""Tier 1 (adapted): conformance tests that pass on either OS with OS-matching images."""
