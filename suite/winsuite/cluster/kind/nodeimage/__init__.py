"""The kind node image for the pinned Kubernetes, assembled offline from what winsuite builds and Debian's packages."""
