"""Shard Lab's Qt app: the window, its views and the classroom, drawing what simcore records."""
