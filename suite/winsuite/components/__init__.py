"""The kit under every cluster winsuite makes: the pinned components built from source and cached by version, their
OCI images, and the processes, health checks and first API calls that run them."""
