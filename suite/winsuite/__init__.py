"""winsuite: the SIG-Windows testing plan (KEP-116) as a pytest plugin and CLI."""
