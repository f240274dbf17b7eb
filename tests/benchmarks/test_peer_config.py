"""The peer reads what ours reads: its rest_api config is built from ours' facts table."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from csbench.peer import build_config
from dlt.sources.rest_api import rest_api_source

from creator_sync.sources.creator_platform.endpoints import RESOURCES


def _by_name() -> dict[str, dict]:
    config = build_config("http://127.0.0.1:9/v1", "not-a-real-token")
    return {resource["name"]: resource for resource in config["resources"]}


def test_every_collection_of_ours_is_a_valid_peer_resource() -> None:
    config = build_config("http://127.0.0.1:9/v1", "not-a-real-token")
    source = rest_api_source(config, name="creator_platform")  # validates the config
    assert set(RESOURCES) <= set(source.resources)
    assert config["resources"][0]["name"] == "sites"  # parents before dependents


def test_site_owned_collections_are_read_per_site_with_the_page_size_rules() -> None:
    resources = _by_name()
    for name, facts in RESOURCES.items():
        params = resources[name]["endpoint"]["params"]
        if facts.site_scoped:
            assert params["filter[site_id]"] == "{resources.sites.id}", name
        else:
            assert "filter[site_id]" not in params, name
        if not facts.takes_page_size:  # payouts: page[number] only
            assert params["page[size]"] is None, name


def test_nested_records_come_from_parallel_single_reads_like_ours() -> None:
    resources = _by_name()
    detail = [facts for facts in RESOURCES.values() if facts.reads_details]
    assert detail, "ours reads no nested records by single reads any more: revisit the peer"
    for facts in detail:
        peer = resources[f"{facts.name}_details"]
        assert peer["parallelized"] is True
        assert peer["endpoint"]["path"] == f"{facts.path.lstrip('/')}/{{resources.{facts.name}.id}}"
        wanted = {name for group in facts.include for name in group}
        if not wanted:  # a plain single read (payout details: the lines are in the record)
            assert "include" not in peer["endpoint"]["params"]
            assert peer["endpoint"]["data_selector"] == "data"
            continue
        assert set(peer["endpoint"]["params"]["include"].split(",")) == wanted
        assert peer["table_name"]({"type": "modules"}) == f"{facts.name}_modules"
