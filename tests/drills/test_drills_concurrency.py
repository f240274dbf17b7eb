"""Two syncs of one pipeline at once: one wins, the other waits or exits clearly."""

from __future__ import annotations

import pytest
from drillkit.drills import concurrency_drill

pytestmark = pytest.mark.slow


def test_two_syncs_at_once(lab):
    out = concurrency_drill(lab)
    assert out.ok, out.explain()
