"""creator-sync."""
