"""The models' SQL translated to PostgreSQL once, and read back from the cache folder after."""

from __future__ import annotations

import os
import time

import sqlglot

from creator_sync.models import translations
from creator_sync.models.translations import KEEP_DAYS, Translations

SQL = ("select date_trunc('month', created_at)::date as date_month, list_value(1, 2) as l, "
       "count(*) filter (where amount > 0) as n from creator_platform.orders group by 1")


def test_a_translation_is_sqlglots_and_the_next_run_reads_it_back(tmp_path) -> None:
    expected = ";\n".join(sqlglot.transpile(SQL, read="duckdb", write="postgres"))
    first = Translations("postgres", tmp_path)
    assert first(SQL) == expected != SQL
    assert (first.hits, first.misses) == (0, 1)
    later = Translations("postgres", tmp_path)  # the next day's build, another process
    assert later(SQL) == expected
    assert (later.hits, later.misses) == (1, 0)
    other = SQL.replace("> 0", "> 1")  # a changed statement is translated afresh
    assert later(other) == ";\n".join(sqlglot.transpile(other, read="duckdb", write="postgres"))
    assert later.misses == 1


def test_another_sqlglot_never_reads_an_older_ones_translations(tmp_path, monkeypatch) -> None:
    Translations("postgres", tmp_path)(SQL)
    monkeypatch.setattr(translations.sqlglot, "__version__", "0.0.0-other")
    newer = Translations("postgres", tmp_path)
    newer(SQL)
    assert (newer.hits, newer.misses) == (0, 1)


def test_an_unwritable_cache_folder_only_means_translating_each_time(tmp_path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    cache = Translations("postgres", blocked)
    assert cache(SQL) == cache(SQL) == ";\n".join(
        sqlglot.transpile(SQL, read="duckdb", write="postgres"))
    assert (cache.hits, cache.misses) == (0, 2)


def test_entries_unused_for_a_month_go_when_new_ones_are_written(tmp_path) -> None:
    Translations("postgres", tmp_path)("select 1")
    Translations("postgres", tmp_path)("select 2")
    cache = Translations("postgres", tmp_path)
    old, kept = sorted(cache.folder.iterdir())[:2]
    stale = time.time() - (KEEP_DAYS + 1) * 86_400
    os.utime(old, (stale, stale))
    cache("select 3")
    assert not old.exists() and kept.exists()
    assert len(list(cache.folder.iterdir())) == 2


def test_the_default_folder_is_the_users_cache(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert translations.cache_root() == tmp_path / "creator-sync" / "sql"
