"""Runs inside the target cluster: winsuite's image, the shard pods of an Indexed Job, following them, merging."""
