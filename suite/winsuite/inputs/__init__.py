"""What winsuite reads and the closed sets of its documents: pins, image catalog, job schema, strict readers."""
