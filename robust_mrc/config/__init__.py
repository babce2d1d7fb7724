"""The configuration: its schema (types, defaults, allowed values), the checks across settings, and
the command-line plumbing shared by the entry points."""
