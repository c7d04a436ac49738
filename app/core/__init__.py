"""The app's Qt-free core: scenarios and their runs, the trace index, the frame at an instant, the prediction game, the latency model. Never imports Qt (import-linter contract)."""
