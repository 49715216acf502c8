"""What decides a run: jobs, options, selection, exclusions, images, pins, the plan, the catalog."""
