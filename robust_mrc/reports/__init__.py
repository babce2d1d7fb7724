"""Reports over finished runs (tables laid out like the papers' tables: ``docs/references.md``)."""
