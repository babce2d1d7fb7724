"""The Lightning wiring: the Trainer and its loggers, the framework's callbacks, the run directory,
checkpointed random state, SLURM requeue and W&B."""
