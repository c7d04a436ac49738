"""
The window's tabs, written once: their keys in order, and where each extra view lives.

Qt-free, so the command line (`--tab`), a deck file's check of its scenes' "tab" and the tests
read the list without loading Qt; app/tabs.py builds the tabs from it.
"""

# key, module, class, title (translated in the class's context, as the view's own self.tr does)
# (modules relative to the app package, which is `app` in the source tree and `shard_lab` installed)
VIEWS = (("weights", ".views.weights.weights_view", "WeightsView", "Weight slices"),
         ("buffers", ".views.buffers.buffer_view", "BufferView", "Buffers"),
         ("latency", ".views.latency.latency_view", "LatencyView", "Decode latency"),
         ("mesh", ".views.mesh.mesh_view", "MeshView", "Mesh"))
# every tab's key in the window's order: the ring view's page (MainWindow's own), then the extra views
TABS = ("ring",) + tuple(key for key, *_ in VIEWS)
# a scenario shown on a tab of its own rather than the ring (the window opens it there; so does a
# deck scene that names no tab)
SCENARIO_TABS = {"tp-forward": "weights", "decode": "latency", "mesh": "mesh"}


def scenario_tab(kind: str) -> str:
    """The tab a scenario of `kind` opens on: its own (SCENARIO_TABS), else the ring."""
    return SCENARIO_TABS.get(kind, "ring")
