"""`creator-sync forget`: erase one person on request, everywhere the product keeps their data.

The raw tables and link tables, the webhook event log and dead letters, dlt's merge staging,
pending load packages (loaded first, then erased), dlt's last-run trace, the logs, the marts
(rebuilt), the report (rebuilt) and, on DuckDB, the file itself (rewritten whole, so that no
erased value survives in a free block). Then every file under the working directory and the
pipeline's folder is read back for the person's email and name. What is kept is a log of
salted hashes (`pipelines.erasure_log`), so that a later sync or delivery that brings them back
can be recognised; the platform must erase them too.
"""

from __future__ import annotations

import contextlib
import secrets as token_source
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import click

from creator_sync.common.duckdb_names import compact_in_place
from creator_sync.common.locking import LockTimeout, pipeline_lock, warehouse_lock
from creator_sync.common.settings import BadSetting, by_key, option
from creator_sync.common.terminal import fail, reported_failures
from creator_sync.common.warehouse import Warehouse, warehouse_of
from creator_sync.models.dbt_context import STAGING_SCHEMA, TARGET_SCHEMA
from creator_sync.pipelines import erasure_log
from creator_sync.pipelines.command_settings import settings as command_settings
from creator_sync.pipelines.factory import build_pipeline
from creator_sync.pipelines.forget_scrub import Person, erase_in_text, join
from creator_sync.pipelines.forget_warehouse import Found, Request, erase, find, remaining
from creator_sync.pipelines.sync import finish_pending
from creator_sync.pipelines.warehouse_sql import data_tables, warehouse_guard
from creator_sync.pipelines.webhooks.forget_requests import scrub_journal
from creator_sync.pipelines.webhooks.journal import default_journal_dir

SKIPPED_FOLDERS = {".venv", ".git", "__pycache__", "node_modules"}
DEFAULT_REPORT = "report.html"


@dataclass
class Outcome:
    found: list[Found] = field(default_factory=list)
    not_found: list[Request] = field(default_factory=list)
    already: list[tuple[Request, str]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    still_in: list[str] = field(default_factory=list)


def read_requests(emails: Iterable[str], contact_ids: Iterable[str],
                  from_file: Iterable[str] | None) -> list[Request]:
    """The people asked for; a line of `--from-file` is an email (it has an @) or a contact id."""
    asked = [Request(email=e.strip()) for e in emails if e.strip()]
    asked += [Request(contact_id=c.strip()) for c in contact_ids if c.strip()]
    for line in from_file or []:
        item = line.split("#", 1)[0].strip()
        if item:
            asked.append(Request(email=item) if "@" in item else Request(contact_id=item))
    return asked


def new_salt() -> str:
    """A salt for the erasure log, generated at the first erasure into .dlt/secrets.toml
    (`[creator_sync] erasure_salt`; the log's hashes mean nothing without it)."""
    from creator_sync.common.dlt_files import DLT_DIR
    from creator_sync.init_command import write_settings  # the one writer of .dlt files

    salt = token_source.token_hex(32)
    item = by_key("erasure_salt")
    write_settings(Path.cwd() / DLT_DIR, {}, {item.section: {item.key: salt}})
    return salt


def forget_people(wh: Warehouse, requests: list[Request], *, pii_mode: str | None,
                  pii_salt: str, salt: str | None, journal_dir: Path, report: Path | None,
                  timezone: str | None, lock_timeout: float, root: Path) -> Outcome:
    out = Outcome()
    if wh.destination == "duckdb" and not Path(str(wh.duckdb_path)).is_file():
        raise click.ClickException(f"{wh.duckdb_path}: no such DuckDB file (nothing was synced "
                                   "here, so nothing to erase)")
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(pipeline_lock(wh.pipelines_dir, wh.pipeline_name,
                                              timeout=lock_timeout))
        except LockTimeout:
            raise click.ClickException(f"a sync of pipeline {wh.pipeline_name!r} is running: "
                                       "run forget when it ends (or give --lock-timeout)") from None
        return _forget_locked(out, wh, requests, pii_mode=pii_mode, pii_salt=pii_salt, salt=salt,
                              journal_dir=journal_dir, report=report, timezone=timezone,
                              lock_timeout=lock_timeout, root=root)


def _forget_locked(out: Outcome, wh: Warehouse, requests: list[Request], *,
                   pii_mode: str | None, pii_salt: str, salt: str | None, journal_dir: Path,
                   report: Path | None, timezone: str | None, lock_timeout: float,
                   root: Path) -> Outcome:
    """Under the pipeline lock: no sync writes meanwhile (the receiver waits per batch)."""
    pipeline = build_pipeline(wh)
    pending = finish_pending(pipeline, wh)
    if pending:
        out.lines.append(f"pending load packages: {pending} loaded first, then erased")
    with warehouse_guard(pipeline), pipeline.sql_client() as client:
        tables = data_tables(pipeline)
        for request in requests:
            found = find(client, tables, request, pii_mode, pii_salt)
            if not found.empty:
                out.found.append(found)
                continue
            before = salt and erasure_log.erased_before(wh.pipelines_dir, salt, request.email
                                                        or str(request.contact_id))
            if before is not None:
                out.already.append((request, before.erased_at))
            else:
                out.not_found.append(request)
        if not out.found:
            return out
        person = join(f.person for f in out.found)
        erased = erase(client, tables, person)
    total = sum(erased.values())
    detail = ", ".join(f"{t} {n}" for t, n in sorted(erased.items()))
    out.lines.append(f"warehouse: {total} row(s) erased ({detail or 'none held a value'})")
    out.lines.append(f"webhook journal: {scrub_journal(journal_dir, person)}")
    out.lines += _files(wh, person)
    out.lines += _models_and_report(wh, report, timezone)
    if wh.destination == "duckdb":
        with warehouse_lock(str(wh.duckdb_path), timeout=lock_timeout):
            compact_in_place(str(wh.duckdb_path))
        out.lines.append("warehouse file: rewritten whole (no erased value is left in a free "
                         "block)")
    schemas = (wh.dataset, TARGET_SCHEMA, STAGING_SCHEMA)
    with warehouse_guard(pipeline), pipeline.sql_client() as client:
        left = {f"{schema}.{t}": n for schema in schemas
                for t, n in remaining(client, schema, person).items()}
        # which of their texts another person's rows hold: no file check can tell whose it is
        shared = {text for text in person.texts if left and any(
            remaining(client, schema, replace(person, texts=frozenset({text})))
            for schema in schemas)}
    if left:  # a name another person shares: theirs is kept
        out.lines.append("still named in (a name another person shares): " + ", ".join(
            f"{t} {n}" for t, n in sorted(left.items())))
    salt = salt or new_salt()
    for found in out.found:
        emails = {t for t in found.texts if "@" in t} | {found.request.email or ""}
        erasure_log.record(wh.pipelines_dir, salt, emails - {""},
                           found.contact_ids | found.customer_ids, {"warehouse": erased})
    out.lines.append(f"erasure log: {erasure_log.log_path(wh.pipelines_dir)} (salted hashes, "
                     "no personal data)")
    out.still_in = _files_holding(replace(person, texts=person.texts - shared),
                                  [root, Path(wh.pipelines_dir)])
    return out


def _files(wh: Warehouse, person: Person) -> list[str]:
    """Logs rewritten without the person; dlt's last-run trace removed (a failing run's trace
    can quote values)."""
    folder = Path(wh.pipelines_dir)
    rewritten, traces = 0, 0
    for path in _walk(folder):
        if ".log" in path.name:
            text = path.read_text(encoding="utf-8", errors="replace")
            scrubbed = erase_in_text(text, person)
            if scrubbed != text:
                path.write_text(scrubbed, encoding="utf-8")
                rewritten += 1
        elif path.name == "trace.pickle":
            path.unlink()
            traces += 1
    return [f"logs: {rewritten} rewritten; dlt traces: {traces} removed"]


def _models_and_report(wh: Warehouse, report: Path | None, timezone: str | None) -> list[str]:
    """The marts rebuilt from the erased raw tables (where they were built), and the report."""
    from creator_sync.models.adapters import DESTINATIONS, open_adapter
    from creator_sync.models.runner import Params, build

    if wh.destination not in DESTINATIONS:
        return ["models: rebuild them with dbt (this warehouse's marts are not built here)"]
    lines = []
    lock = (warehouse_lock(str(wh.duckdb_path)) if wh.destination == "duckdb"
            else contextlib.nullcontext())
    with lock:
        adapter = open_adapter(wh.destination, wh.duckdb_path or "")
        try:
            if adapter.schema_exists(TARGET_SCHEMA):
                build(adapter, Params(wh.dataset, timezone), run_tests=False)
                lines.append(f"models: rebuilt (schema {TARGET_SCHEMA})")
            else:
                lines.append("models: none built yet")
        finally:
            adapter.close()
    if report is not None and report.exists():
        from creator_sync.report.render import write_report

        write_report(wh.duckdb_path or "", str(report), dataset=wh.dataset,
                     destination=wh.destination)
        lines.append(f"report: {report} rebuilt")
    return lines


def _walk(folder: Path) -> Iterator[Path]:
    if not folder.is_dir():
        return
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink() and not (SKIPPED_FOLDERS & set(path.parts)):
            yield path


def _files_holding(person: Person, roots: list[Path]) -> list[str]:
    """Files under `roots` that still hold one of the person's texts, byte for byte."""
    needles = [t.encode() for t in person.texts] + [t.lower().encode() for t in person.texts]
    seen: set[Path] = set()
    holding = []
    for root in roots:
        for path in _walk(root):
            real = path.resolve()
            if real in seen:
                continue
            seen.add(real)
            with contextlib.suppress(OSError):
                data = path.read_bytes()
                if any(n and n in data for n in needles):
                    holding.append(str(path))
    return holding


@click.command("forget")
@click.option("--email", multiple=True, help="The person's email (repeatable).")
@click.option("--contact-id", multiple=True, help="The person's contact id (repeatable).")
@click.option("--from-file", type=click.File("r"),
              help="One email or contact id a line ('-': standard input).")
@option("duckdb")
@option("dataset")
@option("destination")
@option("pipelines_dir")
@click.option("--journal", "journal_dir", type=click.Path(file_okay=False), default=None,
              help="The receiver's journal [default: listen's: <duckdb>.webhooks-journal, or "
              "webhooks-journal in the pipeline's folder on PostgreSQL].")
@click.option("--report", "report_path", default=DEFAULT_REPORT, show_default=True,
              help="The report to rebuild, if it exists.")
@click.option("--lock-timeout", type=float, default=0, show_default=True,
              help="Seconds to wait for a running sync of the same pipeline.")
@click.option("--verbose", "-v", is_flag=True, help="Tracebacks on failure.")
def forget_command(email: tuple[str, ...], contact_id: tuple[str, ...], from_file: Any,
                   duckdb: str | None, dataset: str | None, destination: str | None,
                   pipelines_dir: str | None, journal_dir: str | None, report_path: str,
                   lock_timeout: float, verbose: bool) -> None:
    """Erase one person everywhere the product keeps their data (exit 1: not found).

    Erase them on the platform too: until then a sync brings them back (erased again then).
    """
    with reported_failures(verbose):
        requests = read_requests(email, contact_id, from_file)
        if not requests:
            raise BadSetting("name the person: --email, --contact-id or --from-file",
                             "flag=--email")
        # both tables: the warehouse's keys (the app's) and `pii`/`pii_salt` (the source's)
        settings = command_settings(duckdb=duckdb, dataset=dataset, destination=destination,
                                    pipelines_dir=pipelines_dir)
        wh = warehouse_of(settings)
        journal = Path(journal_dir) if journal_dir else default_journal_dir(wh.duckdb_path, wh.pipelines_dir)
        out = forget_people(
            wh, requests, pii_mode=settings["pii"], pii_salt=settings["pii_salt"] or "",
            salt=settings["erasure_salt"], journal_dir=journal, report=Path(report_path),
            timezone=settings["timezone"], lock_timeout=lock_timeout, root=Path.cwd())
    for found in out.found:
        ids = ", ".join(f"contact {c}" for c in sorted(found.contact_ids))
        ids += (", " if ids and found.customer_ids else "") + ", ".join(
            f"customer {c}" for c in sorted(found.customer_ids))
        click.echo(f"forgot {found.request}: {ids or 'known by email only'}")
    for request, when in out.already:
        click.echo(f"{request}: already erased at {when}; nothing of them is left")
    for line in out.lines:
        click.echo(f"  {line}")
    if out.still_in:
        fail(f"erased, but still named in {len(out.still_in)} file(s) creator-sync did not "
             f"write or could not rewrite: {', '.join(out.still_in)}")
    if out.found:
        click.echo("  erase them on the platform too: until then a sync brings them back, and "
                   "they are erased again")
    if out.not_found:
        fail("; ".join(f"no person with {r} in the warehouse {wh.dataset}" for r in out.not_found))
