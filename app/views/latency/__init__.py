"""The decode-latency view: controls, plots, items, texts and exports."""
