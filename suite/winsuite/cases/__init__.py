"""The winsuite test catalog: tests grouped by tier, one file per area."""
