"""`process_tuning.settle_gc` (issue 15, CPU): the import-time heap leaves the collector's walks, young
collections wait for more allocations, and cyclic garbage made afterwards is still freed."""

from __future__ import annotations

from gc_child import run_child


def test_settle_gc_freezes_the_heap_raises_the_young_threshold_and_still_collects_cycles():
    # a child process: the freeze and the thresholds are process-wide
    run_child("""
        import gc
        from creator_sync.pipelines import factory, process_tuning  # factory: dlt, pyarrow, ...
        from creator_sync.pipelines.tuning import GC_YOUNG_THRESHOLD

        default = gc.get_threshold()
        assert gc.get_freeze_count() == 0
        process_tuning.settle_gc()
        frozen = gc.get_freeze_count()
        assert frozen > 10_000, frozen  # dlt, pyarrow, ... (imported by factory)
        assert gc.get_threshold() == (GC_YOUNG_THRESHOLD, *default[1:])
        process_tuning.settle_gc()  # once per process
        assert gc.get_freeze_count() == frozen
    """, then_cycles_freed=True)
