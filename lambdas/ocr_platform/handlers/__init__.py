"""Lambda entry points. Each one parses its event, calls the domain code and returns; nothing else."""
