"""`creator-sync sandbox`: serve the emulator until interrupted."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import click

from creator_sync.sandbox.dataset import SCALES
from creator_sync.sandbox.options import CUSTOMER_RULES, DEFAULT_BRAND, DEFAULT_NOW, Options
from creator_sync.sandbox.ratelimit import WINDOW_KINDS

DEFAULT_PORT = 8765


def _watch_parent(pid: int, stop: threading.Event) -> None:
    """Exit when the process that started us is gone (tests and benchmarks)."""
    while not stop.wait(1.0):
        try:
            os.kill(pid, 0)
        except OSError:
            stop.set()


@click.command("sandbox")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind.")
@click.option("--port", default=DEFAULT_PORT, show_default=True, type=int,
              help="Port (0 picks a free one).")
@click.option("--seed", default=42, show_default=True, type=int,
              help="Same seed, same data (byte for byte).")
@click.option("--scale", default="demo", show_default=True, type=click.Choice(list(SCALES)),
              help="tiny ~700 records, demo ~10k, small ~100k, medium ~1.2M, large ~11M.")
@click.option("--sites", default=2, show_default=True, type=click.IntRange(1, 999))
@click.option("--now", default=DEFAULT_NOW, show_default=True,
              help="Sandbox clock (ISO 8601); data covers the 18 months before it.")
@click.option("--token-ttl", default=7200, show_default=True, type=click.IntRange(1),
              help="Access token lifetime, seconds.")
@click.option("--refresh-token-ttl", default=30 * 86400, show_default=True,
              type=click.IntRange(1), help="Refresh token lifetime, seconds.")
@click.option("--page-size-default", default=25, show_default=True, type=click.IntRange(1))
@click.option("--page-size-max", default=100, show_default=True, type=click.IntRange(1))
@click.option("--rate-limit", default=0, show_default=True, type=click.IntRange(0),
              help="Requests per --rate-window per client (0: unlimited).")
@click.option("--rate-window", default=60.0, show_default=True, type=click.FloatRange(min=0.001),
              help="Length of the rate-limit window, seconds.")
@click.option("--rate-window-type", default="sliding", show_default=True,
              type=click.Choice(list(WINDOW_KINDS)),
              help="sliding: N in any window; fixed: N per clock-aligned window.")
@click.option("--retry-after/--no-retry-after", default=True, show_default=True,
              help="Send Retry-After with 429.")
@click.option("--latency-ms", default=0, show_default=True, type=click.IntRange(0),
              help="Delay added to every request.")
@click.option("--fault-rate", default=0.0, show_default=True, type=click.FloatRange(0, 1),
              help="Fraction of /v1 requests that fail (deterministic per seed).")
@click.option("--fault-slow-seconds", default=15.0, show_default=True, type=float,
              help="How long a 'slow' fault stalls before answering.")
@click.option("--quirks/--no-quirks", default=False, show_default=True,
              help="Behave like real platforms do (see docs/sandbox.md).")
@click.option("--unreadable-amounts", default=0, show_default=True, type=click.IntRange(0),
              metavar="N", help="Serve the first N payouts with an amount of `n/a` (a value "
                               "no sync can read).")
@click.option("--refuse-filters", default="", show_default=False, metavar="COLLECTION:FILTER,...",
              help="Answer these list filters with a 400, e.g. blog_posts:updated_at_gt.")
@click.option("--brand", default=DEFAULT_BRAND, show_default=True, metavar="WORD",
              help="Brand word of the payouts path: /v1/WORD_payments_payouts.")
@click.option("--maintenance/--no-maintenance", default=False, show_default=True,
              help="Start unavailable: every /v1 request answers 503 (toggle with "
                   "POST /_sandbox/maintenance).")
@click.option("--activity-interval", default=0.0, show_default=True, type=float,
              help="Run activity every S seconds in the background (0: off).")
@click.option("--activity-count", default=10, show_default=True, type=click.IntRange(1),
              help="Events per background activity tick.")
@click.option("--settlement-delay-days", default=2, show_default=True, type=click.IntRange(0),
              help="Payout rule: days from a transaction to its funds being payable.")
@click.option("--seconds-per-event", default=3600, show_default=True, type=click.IntRange(0),
              help="How far each activity event moves the sandbox clock.")
@click.option("--webhook-retries", default=3, show_default=True, type=click.IntRange(0))
@click.option("--webhook-backoff", default=0.5, show_default=True, type=float,
              help="First webhook retry delay, seconds (doubles each retry).")
@click.option("--response-cache-mb", default=256, show_default=True, type=click.IntRange(0),
              help="Memory for cached GET responses (0: off).")
@click.option("--customer-on-contact-delete", default="delete", show_default=True,
              type=click.Choice(list(CUSTOMER_RULES)),
              help="What DELETE /v1/contacts/{id} does to the contact's customer.")
@click.option("--delete-rate", default=0.0, show_default=True, type=click.FloatRange(0, 1),
              help="Per activity event, the chance a contact (and apart, a note) is deleted "
                   "(0.01: about as often as accounts do).")
@click.option("--parent-pid", default=None, type=int, hidden=True)
def sandbox_command(parent_pid: int | None, **kwargs: object) -> None:
    """Serve a seeded emulator of the Creator Platform API on loopback."""
    from creator_sync.sandbox.server import RunningServer, build_app

    options = Options.from_kwargs(**kwargs)
    try:
        options.validate()
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    started = time.perf_counter()
    app = build_app(options)
    try:
        server = RunningServer(app, options.host, options.port).start()
    except OSError as exc:
        raise click.ClickException(
            f"cannot listen on {options.host}:{options.port}: {exc.strerror or exc} "
            "(use --port 0 for a free port)") from None
    click.echo(f"generated {app.store.total_records():,} records at scale {options.scale} in "
               f"{time.perf_counter() - started:.1f} s", err=True)
    print(f"sandbox ready at {server.base_url}", flush=True)
    stop = threading.Event()
    stopped_by: list[int] = []

    def on_signal(signum: int, _frame: object) -> None:
        stopped_by.append(signum)
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, on_signal)
    if parent_pid:
        threading.Thread(target=_watch_parent, args=(parent_pid, stop), daemon=True).start()
    while not stop.wait(0.5):
        if not server.thread.is_alive():
            break
    server.stop()
    sys.exit(128 + stopped_by[0] if stopped_by else 0)  # 130 SIGINT, 143 SIGTERM
