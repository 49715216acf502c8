"""winsuite held to upstream's own programs, built from the Go module proxy into the cache and run on loopback."""
