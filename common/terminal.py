"""How every command ends: exit codes, the one `error:` line, signals, and where logs go.

| exit | meaning |
|---|---|
| 0 | success |
| 1 | a failure at run time |
| 2 | a usage or configuration error |
| 130 | SIGINT (Ctrl-C) |
| 143 | SIGTERM |

Failures print ONE line on stderr, `error: <what> [where]`, with no traceback or Python class
name unless `--verbose`. SIGINT and SIGTERM raise `Interrupted` (a KeyboardInterrupt) in the main
thread, so every `finally` runs (the token is revoked, locks are released); a second signal
ends the process at once.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import click

from .errors import OneLineError
from .files import make_state_dir, private_opener
from .locking import LockTimeout

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_SIGNAL_BASE = 128  # 128 + signal number: 130 SIGINT, 143 SIGTERM
HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM)

LOG_ROTATE_BYTES = 2 * 1024**2  # a log is rotated to `.1` beyond this, before a run appends
LOG_KEEP = 3  # rotated logs kept: `.1` .. `.3`

_received: list[int] = []  # signals received by this process, in order
# until a command sets up its log: nothing of ours reaches stderr by Python's last resort
logging.getLogger("creator_sync").addHandler(logging.NullHandler())


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived; `signum` says which."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _on_signal(signum: int, _frame: FrameType | None) -> None:
    if _received:  # the second signal: the user means it, cleanup or not
        name = signal.Signals(signum).name
        with contextlib.suppress(OSError):  # os.write: no buffered stream inside a handler
            os.write(2, (error_line(f"{name} again: stopped at once, without finishing the "
                                    "cleanup; the next run carries on from the last "
                                    "checkpoint") + "\n").encode())
        os._exit(EXIT_SIGNAL_BASE + signum)
    _received.append(signum)
    raise Interrupted(signum)


def install_signal_handlers() -> None:
    """SIGINT and SIGTERM raise `Interrupted` (a signal the parent ignores stays ignored)."""
    for signum in HANDLED_SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _on_signal)


def note_signal(signum: int) -> None:
    """For commands with their own handlers (servers that drain first): exit 128+signum later."""
    if signum not in _received:
        _received.append(signum)


def received_signal() -> int | None:
    return _received[0] if _received else None


def interrupt_code(exc: BaseException | None = None) -> int:
    """130 or 143: from the exception chain when it says (ours: `signum`; dlt, which takes
    the signals over while it loads: `signal_code`), else from the signal received."""
    for link in chain(exc) if exc is not None else []:
        signum = getattr(link, "signum", None) or getattr(link, "signal_code", None)
        if signum:
            return EXIT_SIGNAL_BASE + int(signum)
    return EXIT_SIGNAL_BASE + int(received_signal() or signal.SIGINT)


def signal_name(code: int) -> str:
    try:
        return signal.Signals(code - EXIT_SIGNAL_BASE).name
    except ValueError:
        return "a signal"


def chain(exc: BaseException) -> list[BaseException]:
    """`exc` and every exception it was raised from or during, outermost first."""
    out: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and cur not in out:
        out.append(cur)
        cur = cur.__cause__ or cur.__context__
    return out


def was_interrupted(exc: BaseException) -> bool:
    """A signal stopped the run, even when a library wrapped the KeyboardInterrupt (dlt does)."""
    return any(isinstance(e, KeyboardInterrupt) for e in chain(exc)) or received_signal() is not None


def error_line(message: str) -> str:
    return "error: " + " ".join(str(message).split())


def fail(message: str, code: int = EXIT_FAILURE) -> None:
    """Print the one `error:` line and exit with `code`."""
    click.echo(error_line(message), err=True)
    exit_now(code)


def exit_now(code: int) -> None:
    """Exit with `code`. After a signal, without waiting for worker threads still blocked in a
    request (their results are no longer wanted): every lock and file is already closed."""
    if code >= EXIT_SIGNAL_BASE:
        logging.shutdown()
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def verbose_requested(argv: list[str] | None = None) -> bool:
    args = sys.argv[1:] if argv is None else argv
    return "--verbose" in args or "-v" in args


def usage_message(exc: click.UsageError) -> str:
    """click's usage error as one message, with where to read more (click prints three lines)."""
    ctx = exc.ctx
    hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
    return exc.format_message() + hint


# ---------------------------------------------------------------- logs
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def _rotate(path: Path) -> None:
    if not path.exists() or path.stat().st_size < LOG_ROTATE_BYTES:
        return
    for n in range(LOG_KEEP - 1, 0, -1):
        older = path.with_name(f"{path.name}.{n}")
        if older.exists():
            older.replace(path.with_name(f"{path.name}.{n + 1}"))
    path.replace(path.with_name(f"{path.name}.1"))


class _PrivateFileHandler(logging.FileHandler):
    """Appends; a new log file is created 0600 (logs name customers, sites, URLs)."""

    def _open(self):  # type: ignore[no-untyped-def]
        return open(self.baseFilename, self.mode, encoding=self.encoding, opener=private_opener)


def setup_logging(verbose: bool, log_file: Path | None, *, what: str = "run") -> None:
    """Our log and dlt's go to `log_file` (appended, rotated by size), and to stderr only with
    `--verbose`: dlt's own `[WARNING]`/`[ERROR]` lines never reach the terminal otherwise.

    Call it while holding the lock of what the log belongs to: a process that lost the race
    must not write into (or truncate) the winner's log.
    """
    ours = logging.getLogger("creator_sync")
    dlt_logger = logging.getLogger("dlt")
    for logger in (ours, dlt_logger):
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
            handler.close()
        logger.propagate = False
    ours.setLevel(logging.DEBUG)
    fmt = logging.Formatter(_FORMAT)
    if log_file is not None:
        make_state_dir(log_file.parent)
        _rotate(log_file)
        for logger in (ours, dlt_logger):  # one handler each: dlt restyles the one it finds
            handler = _PrivateFileHandler(log_file, mode="a", encoding="utf-8")
            handler.setFormatter(fmt)
            logger.addHandler(handler)
        ours.info("%s started (pid %s, %s)", what, os.getpid(),
                  time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    if verbose:
        for logger in (ours, dlt_logger):
            handler = logging.StreamHandler(sys.stderr)
            handler.setFormatter(fmt)
            handler.addFilter(lambda record: record.name != RETRY_LOGGER)  # shown below
            logger.addHandler(handler)
    show_retries()
    for logger in (ours, dlt_logger):
        if not logger.handlers:  # else Python's last-resort handler prints to stderr
            logger.addHandler(logging.NullHandler())
    # httpx/httpcore can log request lines and headers at DEBUG: never let them
    for noisy in ("httpx", "httpcore"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


RETRY_LOGGER = "creator_sync.retries"  # the client's one line per retry of a failure


def show_retries() -> None:
    """Every retry of a failure as one plain line on stderr, quiet or not (`--no-progress` is
    cron's setting: a host that does not answer must not be minutes of silence); the lines go to
    the log file too, through the `creator_sync` logger."""
    logger = logging.getLogger(RETRY_LOGGER)
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
        handler.close()
    handler = _CurrentStderr()
    handler.setFormatter(logging.Formatter("%(message)s"))
    handler.setLevel(logging.WARNING)
    logger.addHandler(handler)
    logger.propagate = True


class _CurrentStderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to `sys.stderr` as it is when a line comes: the progress bar (rich) redirects it
    while it draws, and then prints the line above the bar instead of through it."""

    @property  # type: ignore[override]
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


@contextlib.contextmanager
def reported_failures(verbose: bool, log_file: Path | None = None, *,
                      interrupted: Callable[[int], str] | None = None) -> Iterator[None]:
    """Run a command body: any failure ends as one line and the contract's exit code.

    `log_file`: where the details went (named in the line); `interrupted(code)`: the line for
    a signal, saying what the command kept.
    """
    log = logging.getLogger("creator_sync")
    try:
        yield
    except click.exceptions.Exit:
        raise
    except click.UsageError as exc:
        log.info("usage error: %s", exc.format_message())
        fail(usage_message(exc), EXIT_USAGE)
    except click.ClickException as exc:
        fail(exc.format_message(), exc.exit_code)
    except BaseException as exc:
        if isinstance(exc, SystemExit):
            raise
        if was_interrupted(exc):
            code = interrupt_code(exc)
            log.warning("interrupted by %s", signal_name(code))
            fail(interrupted(code) if interrupted else f"interrupted by {signal_name(code)}", code)
        links = chain(exc)
        usage = is_usage_error(exc)
        locked_out = any(isinstance(e, LockTimeout) for e in links)  # no log of ours exists
        log.exception("failed")
        kept = log_file is not None and log_file.exists()  # (an unwritable folder has none)
        where = f" (details: {log_file})" if kept and not verbose and not locked_out else ""
        fail(describe(exc, verbose) + where, EXIT_USAGE if usage else EXIT_FAILURE)


def is_usage_error(exc: BaseException) -> bool:
    """A configuration or usage error (exit 2), however deep a library wrapped it."""
    links = chain(exc)
    return (any(isinstance(e, click.UsageError) or (isinstance(e, OneLineError) and e.usage)
                for e in links)
            or dlt_configuration_problem(links) is not None)


def dlt_configuration_problem(links: list[BaseException]) -> str | None:
    """dlt's configuration failures in one line naming the file or the keys: a `.dlt` TOML file
    it cannot parse, or settings (a destination's credentials, say) that no provider holds."""
    from dlt.common.configuration.exceptions import ConfigFieldMissingException
    from dlt.common.configuration.providers.toml import TomlProviderReadException

    for link in links:
        if isinstance(link, TomlProviderReadException):
            return _unreadable_toml(link)
        if isinstance(link, ConfigFieldMissingException):
            return _missing_configuration(link)
    return None


def _unreadable_toml(exc: Any) -> str:
    import tomllib

    problem = str(exc).split("\n", 1)[-1].strip()  # the parser's words: where, never a value
    for path in exc.full_paths:
        try:
            tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except OSError:
            continue
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            return f"{path}: not valid TOML: {problem}"
    return f"{exc.file_name}: not valid TOML: {problem}"


def _missing_configuration(exc: Any) -> str:
    """Which keys are missing, by section, and the environment variable of the first one."""
    from dlt.common.configuration.exceptions import LookupTrace, LookupTraces

    wanted: dict[str, list[str]] = {}

    def walk(field: str, traces: list[Any]) -> None:
        best: Any = None
        for trace in traces:
            if isinstance(trace, LookupTraces):
                for inner, inner_traces in trace.traces.items():
                    walk(inner, inner_traces)
            elif (isinstance(trace, LookupTrace)
                  and trace.key == "__".join([*trace.sections, field]).upper()
                  and (best is None or len(trace.sections) > len(best.sections))):
                best = trace
        if best is not None:
            wanted.setdefault(".".join(best.sections), []).append(field)

    for field, traces in exc.traces.items():
        walk(field, traces)
    if not wanted:
        return f"missing configuration: {', '.join(exc.fields)}"
    section, keys = next(iter(wanted.items()))
    example = "__".join([*section.split("."), keys[0]]).upper()
    missing = "; ".join(f"[{s}] {', '.join(k)}" for s, k in wanted.items())
    return (f"missing configuration {missing}: set it in .dlt/secrets.toml or the environment "
            f"(e.g. {example})")


def exit_code_of(exc: BaseException) -> int:
    return EXIT_USAGE if is_usage_error(exc) else EXIT_FAILURE


def describe(exc: BaseException, verbose: bool = False) -> str:
    """The most telling message of an exception chain; the class name only with --verbose."""
    links = chain(exc)
    problem = dlt_configuration_problem(links)
    if problem is not None:
        return problem
    for candidate in links:
        if isinstance(candidate, OneLineError | LockTimeout):
            return " ".join(str(candidate).split())
        if isinstance(candidate, click.ClickException):
            return " ".join(candidate.format_message().split())
    inner = links[-1]
    text = " ".join(str(inner).split())[:500] or "unexpected failure"
    return f"{type(inner).__name__}: {text}" if verbose else text
