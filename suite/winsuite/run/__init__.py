"""`winsuite run`: the request resolved once, the phases here or inside the cluster, and the one end of every build."""
