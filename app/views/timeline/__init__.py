"""The per-GPU timelines: the run's messages, and a model step's compute and communication."""
