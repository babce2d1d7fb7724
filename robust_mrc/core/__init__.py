"""What every room may use: the user-error class, the journal of resumable jobs, the progress
clock, the process group. Imports nothing else of the package."""
