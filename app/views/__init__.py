"""The Qt views, one folder each. Views never import the classroom (import-linter contract)."""
