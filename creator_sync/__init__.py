"""The top layer: the `creator-sync` console script and the `demo` that runs every step.

Nothing imports it (tests/test_layers.py checks); it may import every other package.
"""
