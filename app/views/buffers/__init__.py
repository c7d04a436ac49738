"""The buffer heatmap view."""
