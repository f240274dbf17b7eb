"""Drill harness: sync runner, proxy, warehouse comparison, secret scanner, the drills."""
