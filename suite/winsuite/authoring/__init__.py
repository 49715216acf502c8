"""What test cases import: names and tags, capabilities, placement on the target OS."""
