"""Tools for the project's own tests: golden files from upstream binaries, and upstream programs built into the
cache and run on loopback (a GCS-protocol server, TestGrid's pipeline)."""
