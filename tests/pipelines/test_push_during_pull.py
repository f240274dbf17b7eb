"""Drill (issue 29): push and pull together. A webhook delivery loaded while a pull is listing is
fresher than what the pull listed; the pull's load must not overwrite it. A delivery older than
what the pull listed does not win either: the later `updated_at` wins, whichever path wrote it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import orjson
from sandbox_helpers import PushDuringListing, query, settings, sync

from creator_sync.pipelines.sync import run_sync
from creator_sync.pipelines.webhooks.journal import Journal, JournalReader
from creator_sync.pipelines.webhooks.loader import Loader
from creator_sync.pipelines.webhooks.records import encode, parse_delivery


def _iso(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def pull_while_pushing(sandbox_factory, tmp_path) -> tuple[dict[str, str], dict[str, str]]:
    """Two pulls of customers; deliveries for two of them loaded while the second one lists:
    one newer than what it lists, one older. Returns the names in the warehouse, and the names
    the platform lists."""
    sandbox = sandbox_factory(scale="tiny", sites=1)
    db = tmp_path / "wh.duckdb"
    first = sync(sandbox, db, resources=("customers",))
    assert not first.failed
    customers = sandbox.store.tables["customers"]
    # the two newest: inside the incremental window the next pull lists again
    fresher, staler = (int(r) for r in customers.cols["created_at"].argsort()[::-1][:2])
    fresher_id, staler_id = customers.id_of(fresher), customers.id_of(staler)
    site = str(query(db, "select site_id from creator_platform.customers where id = ?",
                     fresher_id)[0][0])
    # both change on the platform since the first pull: the second pull loads them again
    with sandbox.store.lock:
        customers.cols["updated_at"][[fresher, staler]] = sandbox.store.now - 60
        customers.touch()
        sandbox.store.data_version += 1
    listed_at = datetime.fromtimestamp(sandbox.store.now - 60, UTC)

    def record(cid: str, name: str, updated: datetime) -> dict:
        return {"id": cid, "type": "customers",
                "attributes": {"name": name, "updated_at": _iso(updated)},
                "relationships": {"site": {"data": {"id": site, "type": "sites"}}}}

    def push() -> None:  # what `creator-sync listen` does with two deliveries, mid-listing
        journal = Journal(tmp_path / "journal")
        loader = Loader(journal, db)
        now = datetime.now(UTC)
        bodies = [
            {"id": "e1", "event": "purchase",
             "payload": [record(fresher_id, "Pushed, newer", listed_at + timedelta(hours=1))]},
            {"id": "e2", "event": "purchase",
             "payload": [record(staler_id, "Pushed, older", listed_at - timedelta(days=400))]},
        ]
        journal.append([encode(parse_delivery(orjson.dumps(b), now, site)) for b in bodies])
        loader.load(JournalReader(journal, journal.loaded_seq()).read(100))
        loader.stop()
        journal.close()

    transport = PushDuringListing(push)
    # a periodic full listing: both changed customers are listed (and loaded) again
    second = run_sync(settings(sandbox, db, resources=("customers",), full_refresh_every_days=0),
                      transport=transport, show_progress=False)
    assert transport.pushed and not second.failed
    names = dict(query(db, "select id, name from creator_platform.customers where id in (?, ?)",
                       fresher_id, staler_id))
    listed = {fresher_id: customers.values("name", [fresher])[0],
              staler_id: customers.values("name", [staler])[0]}
    return names, listed


def test_a_pull_never_overwrites_a_fresher_push(sandbox_factory, tmp_path):
    names, listed = pull_while_pushing(sandbox_factory, tmp_path)
    fresher_id, staler_id = listed
    # the delivery loaded after the listing began is newer than what was listed: it stays
    assert names[fresher_id] == "Pushed, newer"
    # a delivery older than the listing does not outlive the pull
    assert names[staler_id] == listed[staler_id]


def test_without_the_restore_the_pull_would_overwrite_it(sandbox_factory, tmp_path, monkeypatch):
    """The drill's control: dlt's merge alone replaces the fresher pushed row."""
    import creator_sync.pipelines.postload as postload

    monkeypatch.setattr(postload, "restore_pushes", lambda pipeline, since: {})
    names, listed = pull_while_pushing(sandbox_factory, tmp_path)
    assert names == listed



def test_a_delivery_put_back_does_not_bring_back_a_deleted_persons_fields(sandbox_factory,
                                                                          tmp_path):
    """The platform deletes a customer; the next sync's complete listing flags them and erases
    their fields in its own load, their purchases' too. A delivery of one of their purchases,
    loaded while that sync listed and newer than what it read, is put back after the load: the
    personal fields it carries are erased again (`[creator_sync] deleted_people = "erase"`)."""
    sandbox = sandbox_factory(scale="tiny", sites=1)
    db = tmp_path / "wh.duckdb"
    assert not sync(sandbox, db, resources=("customers", "purchases")).failed
    purchase_id, customer_id, site = query(
        db, "select id, customer_id, site_id from creator_platform.purchases "
            "where customer_id is not null order by id limit 1")[0]
    customers = sandbox.store.tables["customers"]
    with sandbox.store.lock:
        row = next(r for r in range(len(customers.cols["updated_at"]))
                   if customers.id_of(r) == str(customer_id))
        sandbox.store.deleted.setdefault("customers", set()).add(row)
        customers.touch()
        sandbox.store.data_version += 1
    pushed_at = datetime.now(UTC) + timedelta(days=1)  # newer than anything the pull reads

    def push() -> None:  # `creator-sync listen` loading one delivery, mid-listing
        journal = Journal(tmp_path / "journal")
        loader = Loader(journal, db)
        body = {"id": "e1", "event": "purchase", "payload": [{
            "id": str(purchase_id), "type": "purchases",
            "attributes": {"cardholder_name": "Pushed Cardholder", "updated_at": _iso(pushed_at)},
            "relationships": {"site": {"data": {"id": str(site), "type": "sites"}},
                              "customer": {"data": {"id": str(customer_id), "type": "customers"}}},
        }]}
        journal.append([encode(parse_delivery(orjson.dumps(body), datetime.now(UTC), str(site)))])
        loader.load(JournalReader(journal, journal.loaded_seq()).read(100))
        loader.stop()
        journal.close()

    transport = PushDuringListing(push)
    second = run_sync(settings(sandbox, db, resources=("customers", "purchases"),
                               full_refresh_every_days=0),
                      transport=transport, show_progress=False)
    assert transport.pushed and not second.failed
    assert query(db, "select _is_deleted, name, email from creator_platform.customers "
                     "where id = ?", str(customer_id)) == [(True, None, None)]
    assert query(db, "select cardholder_name, updated_at > now() from creator_platform.purchases "
                     "where id = ?", str(purchase_id)) == [(None, True)]  # put back, erased
