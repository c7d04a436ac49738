"""The weight-slices view."""
