"""Reports over finished runs (tables laid out like the seed papers')."""
