"""Dashboard from stored results: reads the prow layout, writes TestGrid-style pages; never imports suite."""
