"""The drill harness itself must catch what it claims to catch: prove it on hand-made data."""

from __future__ import annotations

import base64
import gzip
import json
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import duckdb
import httpx
import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from drillkit.badinput import catalogue, dump
from drillkit.proxy import DrillProxy, Reply
from drillkit.scan import Scanner
from drillkit.warehouse import check_versions, compare_warehouses, duplicated_keys

BASE_ROWS = [
    ("1", "Ann", 100, "2024-01-01 00:00:00+00", "l1"),
    ("2", "Bob", 250, "2024-01-02 00:00:00+00", "l1"),
    ("3", "Cy", -75, "2024-01-03 00:00:00+00", "l1"),
]


def make_warehouse(path: Path, rows=BASE_ROWS, links=(("1", "t1"), ("2", "t1"), ("2", "t2")),
                   amount_type: str = "BIGINT", extra_sql: str = "") -> Path:
    con = duckdb.connect(str(path))
    con.execute("SET TimeZone = 'UTC'")
    con.execute("CREATE SCHEMA creator_platform")
    con.execute(
        f"CREATE TABLE creator_platform.contacts (id VARCHAR, name VARCHAR, amount_in_cents "
        f"{amount_type}, created_at TIMESTAMPTZ, _dlt_load_id VARCHAR, _dlt_id VARCHAR, "
        "_extracted_at TIMESTAMPTZ)"
    )
    for i, (rid, name, cents, at, load) in enumerate(rows):
        con.execute("INSERT INTO creator_platform.contacts VALUES (?, ?, ?, ?, ?, ?, now())",
                    [rid, name, cents, at, load, f"dlt{i}{load}"])
    con.execute("CREATE TABLE creator_platform.contacts_tags (contact_id VARCHAR, "
                "contact_tag_id VARCHAR, _dlt_load_id VARCHAR)")
    for c, t in links:
        con.execute("INSERT INTO creator_platform.contacts_tags VALUES (?, ?, 'x')", [c, t])
    con.execute("CREATE TABLE creator_platform._dlt_loads (load_id VARCHAR)")
    if extra_sql:
        con.execute(extra_sql)
    con.close()
    return path


@pytest.fixture
def ref(tmp_path: Path) -> Path:
    return make_warehouse(tmp_path / "ref.duckdb")


def test_identical_content_with_different_load_metadata_compares_equal(ref, tmp_path):
    other = [(r, n, c, a, "l2") for r, n, c, a, _ in reversed(BASE_ROWS)]
    drill = make_warehouse(tmp_path / "d.duckdb", rows=other, links=(("2", "t2"), ("1", "t1"), ("2", "t1")))
    result = compare_warehouses(ref, drill)
    assert result.ok, result.report()
    assert result.tables["contacts"].ref_rows == 3


def test_lost_duplicated_and_changed_rows_are_counted(ref, tmp_path):
    rows = [BASE_ROWS[0], BASE_ROWS[0], ("2", "Bobby", 250, "2024-01-02 00:00:00+00", "l1")]
    drill = make_warehouse(tmp_path / "d.duckdb", rows=rows, links=(("1", "t1"), ("1", "t1")))
    result = compare_warehouses(ref, drill)
    contacts, links = result.tables["contacts"], result.tables["contacts_tags"]
    assert (contacts.lost, contacts.duplicated, contacts.changed) == (1, 1, 1)
    assert not contacts.checksum_equal
    assert (links.lost, links.duplicated) == (2, 1)
    assert result.lost == 3 and result.duplicated == 2 and not result.ok


def test_a_changed_timestamp_or_type_is_a_difference(ref, tmp_path):
    rows = [BASE_ROWS[0], BASE_ROWS[1], ("3", "Cy", -75, "2024-01-03 00:00:01+00", "l1")]
    assert compare_warehouses(ref, make_warehouse(tmp_path / "a.duckdb", rows=rows)).tables[
        "contacts"].changed == 1
    typed = compare_warehouses(ref, make_warehouse(tmp_path / "b.duckdb", amount_type="DOUBLE"))
    assert not typed.ok
    assert any("amount_in_cents is DOUBLE" in p for p in typed.tables["contacts"].schema_problems)


def test_missing_and_unexpected_tables_and_columns(ref, tmp_path):
    drill = make_warehouse(
        tmp_path / "d.duckdb",
        extra_sql="CREATE TABLE creator_platform.widgets AS SELECT 1 AS id; "
        "DROP TABLE creator_platform.contacts_tags; "
        "ALTER TABLE creator_platform.contacts ADD COLUMN amount__v_text VARCHAR",
    )
    result = compare_warehouses(ref, drill)
    assert result.tables["contacts_tags"].lost == 3
    assert result.tables["widgets"].schema_problems == ["unexpected table"]
    assert any("amount__v_text" in p for p in result.tables["contacts"].schema_problems)
    allowed = compare_warehouses(ref, drill, allow_extra_tables=frozenset({"widgets"}))
    assert "widgets" not in allowed.tables


def test_ignore_ids_leaves_an_altered_record_out_on_both_sides(ref, tmp_path):
    rows = [BASE_ROWS[0], BASE_ROWS[1], ("3", "N" * 1000, -75, "2024-01-03 00:00:00+00", "l1")]
    drill = make_warehouse(tmp_path / "d.duckdb", rows=rows)
    assert not compare_warehouses(ref, drill).ok
    assert compare_warehouses(ref, drill, ignore_ids={"contacts": {"3"}}).ok


def test_duplicated_keys_finds_ids_held_twice(tmp_path):
    path = make_warehouse(tmp_path / "d.duckdb", rows=[*BASE_ROWS, BASE_ROWS[2], BASE_ROWS[2]])
    assert duplicated_keys(path) == {"contacts": 2}


def test_version_check_accepts_before_or_after_and_flags_the_rest(tmp_path):
    before = make_warehouse(tmp_path / "r0.duckdb")
    after_rows = [BASE_ROWS[0], ("2", "Bob", 300, "2024-01-02 00:00:00+00", "l1"), BASE_ROWS[2],
                  ("4", "Di", 5, "2024-01-04 00:00:00+00", "l1")]
    after = make_warehouse(tmp_path / "r1.duckdb", rows=after_rows)
    # Drill: row 2 still at the old version (fine), row 4 not yet seen (fine), row 3 lost,
    # row 1 duplicated, row 9 from nowhere.
    drill_rows = [BASE_ROWS[0], BASE_ROWS[0], BASE_ROWS[1], ("9", "X", 1, "2024-01-09 00:00:00+00", "l1")]
    drill = make_warehouse(tmp_path / "d.duckdb", rows=drill_rows)
    v = check_versions(before, after, drill)["contacts"]
    assert (v.lost, v.duplicated, v.stale, v.new_missing, v.phantom, v.corrupt) == (1, 1, 1, 1, 1, 0)
    mixed = make_warehouse(tmp_path / "m.duckdb",
                           rows=[BASE_ROWS[0], ("2", "Bob", 999, "2024-01-02 00:00:00+00", "l1"),
                                 BASE_ROWS[2]])
    assert check_versions(before, after, mixed)["contacts"].corrupt == 1
    assert check_versions(before, after, after)["contacts"].ok


# ---------------------------------------------------------------------- scanner
SECRET = "drill-secret-5f0c1e2d"


def test_scanner_finds_secrets_in_every_form_dlt_writes(tmp_path):
    scanner = Scanner({"client_secret": SECRET}, client_id="cid")
    (tmp_path / "plain.log").write_text(f"posting client_secret={SECRET}")
    (tmp_path / "job.insert_values.gz").write_bytes(gzip.compress(f"('{SECRET}')".encode()))
    (tmp_path / "auth.txt").write_text("Basic " + base64.b64encode(f"cid:{SECRET}".encode()).decode())
    pq.write_table(pa.table({"v": ["a", SECRET]}), tmp_path / "rows.parquet")
    state = base64.b64encode(zlib.compress(json.dumps({"secret": SECRET}).encode())).decode()
    db = duckdb.connect(str(tmp_path / "w.duckdb"))
    db.execute("CREATE SCHEMA ds; CREATE TABLE ds._dlt_pipeline_state (state VARCHAR)")
    db.execute("INSERT INTO ds._dlt_pipeline_state VALUES (?)", [state])
    db.execute("CREATE TABLE ds.t (payload JSON)")
    db.execute("INSERT INTO ds.t VALUES (?)", [json.dumps({"a": SECRET})])
    db.close()
    where = {f.where for f in scanner.scan_tree(tmp_path)}
    for expected in ("plain.log", "job.insert_values.gz (gunzipped)", "auth.txt",
                     "rows.parquet (parquet values)", "ds._dlt_pipeline_state (decoded)",
                     "ds.t.payload"):
        assert any(expected in w for w in where), (expected, where)


def test_scanner_is_quiet_on_clean_files(tmp_path):
    (tmp_path / "a.log").write_text("nothing to see; client_secret=***")
    (tmp_path / "b.gz").write_bytes(gzip.compress(b"also nothing"))
    assert Scanner({"client_secret": SECRET, "access_token": "a.b.c" + "x" * 20}).scan_tree(tmp_path) == []


# ---------------------------------------------------------------------- proxy
class _Upstream(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        return

    def do_GET(self):
        body = orjson.dumps({"data": [{"id": "1", "type": "contacts"}], "path": self.path})
        self.send_response(200)
        self.send_header("Content-Type", "application/vnd.api+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers["Content-Length"])
        form = dict(httpx.QueryParams(self.rfile.read(length).decode()))
        ok = form.get("client_secret") == "sandbox-secret"
        body = orjson.dumps({"access_token": "acc.tok.abcdefghijklmnopqr", "refresh_token": "ref-1"}
                            if ok else {"errors": [{"status": "401"}]})
        self.send_response(200 if ok else 401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def upstream():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_proxy_forwards_keeps_upstream_date_and_captures_tokens(upstream):
    with DrillProxy(upstream, secret_map={"unique-secret": "sandbox-secret"}) as proxy:
        token = httpx.post(proxy.base_url + "/v1/oauth/token",
                           data={"client_id": "x", "client_secret": "unique-secret",
                                 "grant_type": "client_credentials"})
        assert token.status_code == 200
        resp = httpx.get(proxy.base_url + "/v1/contacts?page[number]=2",
                         headers={"Authorization": "Bearer acc.tok.abcdefghijklmnopqr"})
        assert resp.json()["path"] == "/v1/contacts?page%5Bnumber%5D=2" or \
            resp.json()["path"] == "/v1/contacts?page[number]=2"
        assert resp.headers["date"]  # the upstream's, not added twice
        assert len(resp.headers.get_list("date")) == 1
        assert proxy.tokens == {"acc.tok.abcdefghijklmnopqr", "ref-1"}
        ex = proxy.collection_requests("contacts")[0]
        assert ex.page == 2 and not ex.is_detail


def test_proxy_mutator_and_abort(upstream):
    with DrillProxy(upstream) as proxy:
        proxy.mutator = lambda ex, fetch: (Reply(abort=True) if ex.page == 3
                                           else fetch().with_json({"data": "bad"}))
        assert httpx.get(proxy.base_url + "/v1/contacts").json() == {"data": "bad"}
        with pytest.raises(httpx.TransportError):
            httpx.get(proxy.base_url + "/v1/contacts?page[number]=3")


# ---------------------------------------------------------------------- catalogue
SAMPLE = {
    "data": [
        {"id": str(2**31 + i), "type": "x",
         "attributes": {"amount_in_cents": 100 + i, "total_price_in_cents": 5, "amount": 12.5,
                        "name": "A", "created_at": "2024-01-01T00:00:00Z",
                        "updated_at": "2024-01-02T00:00:00Z",
                        "raw_extra_contact_information": {}},
         "relationships": {"site": {"data": {"id": "1", "type": "sites"}}}}
        for i in range(3)
    ],
    "included": [{"id": "7", "type": "modules", "attributes": {}}],
    "links": {"self": "http://x/v1/x?page[number]=1"},
    "meta": {"total_pages": 2, "total_count": 3, "current_page": 1},
}


def test_catalogue_has_at_least_25_distinct_cases_that_really_differ_from_the_input():
    from drillkit.badinput import CaseRun
    from drillkit.proxy import Exchange

    cases = catalogue()
    assert len(cases) >= 25
    assert len({c.name for c in cases}) == len(cases)
    ex = Exchange(1, "GET", "/v1/x", [("page[number]", "1")], {}, b"")
    for case in cases:
        doc = json.loads(json.dumps(SAMPLE))
        out = case.edit(CaseRun(proxy=None), doc, ex)  # type: ignore[arg-type]
        body = out.body if isinstance(out, Reply) else out if isinstance(out, bytes) else dump(out)
        assert body != orjson.dumps(SAMPLE), case.name
        assert case.accept <= {"fail", "load"} and case.accept, case.name
        if "fail" in case.accept:
            assert case.words, case.name


# ---------------------------------------------------------------------- scanner pattern, side by side
def test_trie_pattern_matches_like_a_longest_first_alternation():
    import random
    import re

    from drillkit.scan import trie_pattern

    rnd = random.Random(7)
    needles = {b"abc", b"abcdef", b"abd", b"x.y", b"(z)", b"\x00\xff", b"ab"}
    needles |= {bytes(rnd.choice(b"abcdxyz.") for _ in range(rnd.randint(2, 9))) for _ in range(300)}
    flat = re.compile(b"|".join(re.escape(n) for n in sorted(needles, key=len, reverse=True)))
    trie = re.compile(trie_pattern(needles))
    text = bytes(rnd.choice(b"abcdefxyz.()\x00\xff") for _ in range(20_000))
    expected = [m.group(0) for m in flat.finditer(text)]
    assert len(expected) > 100
    assert [m.group(0) for m in trie.finditer(text)] == expected
    assert trie.fullmatch(b"abcdef") and trie.fullmatch(b"ab") and not trie.fullmatch(b"abcd")


def test_bad_input_benches_keep_each_baseline_in_one_bench():
    from drillkit.drills import deal_by_baseline, golden_key

    cases = catalogue()
    benches = deal_by_baseline(cases, 2)
    assert len(benches) == 2
    assert sorted(n for b in benches for n in b) == sorted(c.name for c in cases)
    key = {c.name: golden_key(c) for c in cases}
    for a, b in ((benches[0], benches[1]), (benches[1], benches[0])):
        assert not {key[n] for n in a} & {key[n] for n in b}
    (single,) = deal_by_baseline(cases, 1)
    assert sorted(single) == sorted(c.name for c in cases)


def test_run_parallel_keeps_job_order_and_times_outcomes():
    import time as _time

    from drillkit.drills import DrillOutcome, run_parallel

    def job(name: str, pause: float):
        def run():
            _time.sleep(pause)
            return [DrillOutcome(name, "", "")]
        return run

    seen: list[str] = []
    done = run_parallel([job("slow", 0.3), job("fast", 0.0)], 2, on_done=lambda o: seen.append(o[0].drill))
    assert [o[0].drill for o in done] == ["slow", "fast"]
    assert seen == ["fast", "slow"]  # ran side by side: the fast one finished first
    assert done[0][0].seconds >= 0.3
