"""Results the way Kubernetes CI leaves them: JUnit for TestGrid, started/finished.json, the prow layout."""
