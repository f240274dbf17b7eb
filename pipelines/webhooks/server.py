"""Run the receiver (uvicorn) and the loader thread together, and shut both down in order.

Shutdown order: uvicorn stops accepting and finishes in-flight requests (each already journaled),
then the loader drains the journal into the warehouse. A SIGKILL skips all that and loses nothing:
the next start replays the journal from the loader's committed offset.
"""

from __future__ import annotations

import logging
import signal
import socket
from dataclasses import dataclass, field
from pathlib import Path

import uvicorn

from creator_sync.common.settings import DEFAULT_DATASET
from creator_sync.common.warehouse import Warehouse, as_warehouse
from creator_sync.common.warehouse_db import warehouse_label
from creator_sync.pipelines.erasure_log import ErasedPeople
from creator_sync.pipelines.webhooks.journal import Journal, default_journal_dir
from creator_sync.pipelines.webhooks.loader import Loader
from creator_sync.pipelines.webhooks.receiver import DEFAULT_MAX_BODY, create_app
from creator_sync.pipelines.webhooks.requeue import requeue_dead_letters

log = logging.getLogger("creator_sync.webhooks")


@dataclass
class ListenOptions:
    duckdb_path: Path | None  # the DuckDB warehouse's file (None: `warehouse` is PostgreSQL)
    secret: str = field(repr=False)
    host: str = "127.0.0.1"
    port: int = 8787
    dataset: str = DEFAULT_DATASET
    journal_dir: Path | None = None
    batch_size: int = 500
    batch_interval: float = 1.0
    max_body_bytes: int = DEFAULT_MAX_BODY
    site_id: str | None = None
    pii: str | None = None
    pii_salt: str = field(default="", repr=False)
    requeue_dead_letters: bool = False
    warehouse: Warehouse | None = None  # default: the DuckDB file `duckdb_path` with `dataset`
    erasure_salt: str = field(default="", repr=False)  # of `forget`'s log: erased stay erased

    @property
    def target(self) -> Warehouse:
        if self.warehouse is not None:
            return self.warehouse
        assert self.duckdb_path is not None
        return as_warehouse(self.duckdb_path, self.dataset)

    @property
    def journal_path(self) -> Path:
        """Default: next to a DuckDB warehouse, so both live and are backed up together; for
        PostgreSQL, in the pipeline's state folder (a second receiver needs a `--journal` of
        its own)."""
        return self.journal_dir or default_journal_dir(self.duckdb_path,
                                                       self.target.pipelines_dir)


def bind(host: str, port: int) -> socket.socket:
    """Bind before starting uvicorn so that port 0 works and the real port can be announced."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def serve(options: ListenOptions, announce=print, on_signal=None) -> Loader:
    """Block serving until SIGINT/SIGTERM; return the loader (for its final stats).

    `on_signal(signum)` is told which signal stopped it (the CLI exits 128 + signum after the
    drain)."""
    target = options.target
    if target.duckdb_path:
        Path(target.duckdb_path).parent.mkdir(parents=True, exist_ok=True)
    sock = bind(options.host, options.port)
    try:
        journal = Journal(options.journal_path)
    except Exception:
        sock.close()
        raise
    loader = Loader(
        journal,
        target,
        batch_size=options.batch_size,
        interval=options.batch_interval,
        pii=options.pii,  # type: ignore[arg-type]
        pii_salt=options.pii_salt,
        erased=ErasedPeople(options.target.pipelines_dir, options.erasure_salt),
    )
    if options.requeue_dead_letters:
        requeued = requeue_dead_letters(journal, target)
        announce(f"requeued {requeued} dead-lettered deliveries for another load attempt")
    pending = journal.durable_seq - journal.loaded_seq()
    app = create_app(
        journal,
        options.secret,
        max_body_bytes=options.max_body_bytes,
        default_site_id=options.site_id,
    )
    port = sock.getsockname()[1]
    shown_host = f"[{options.host}]" if ":" in options.host else options.host
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,  # the access log would print the secret path segment
        lifespan="on",
        timeout_graceful_shutdown=10,
        backlog=2048,
    )
    server = uvicorn.Server(config)

    def request_exit(signum: int, _frame: object) -> None:
        # Installed before uvicorn's own handlers: covers a signal that arrives before uvicorn is
        # up, and uvicorn re-raises the signal after its graceful shutdown (which, with the
        # default handler, would kill the process before the loader drains).
        server.should_exit = True
        if on_signal is not None:
            on_signal(signum)

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, request_exit)
    loader.start()
    if pending:
        announce(f"replaying {pending} journaled deliveries not yet loaded")
    announce(
        f"webhook receiver ready at http://{shown_host}:{port}/hooks/<secret> "
        f"(journal {options.journal_path}, warehouse {warehouse_label(target)})"
    )
    try:
        server.run(sockets=[sock])
    finally:
        loader.stop()
        journal.close()
        sock.close()
        stats = loader.stats
        announce(
            f"stopped: {stats.events_loaded} events loaded, {stats.duplicates} duplicates skipped, "
            f"{stats.dead_letters} dead letters, {stats.batches} batches"
        )
    return loader
