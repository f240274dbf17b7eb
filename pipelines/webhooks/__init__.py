"""Push path: hooks CLI, the `listen` receiver, its journal and its micro-batch loader."""
