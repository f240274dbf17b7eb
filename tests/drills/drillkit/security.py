"""Security drills: secrets never leak, plain HTTP and bad certificates are refused, PII options.

Secrets are made unique per drill (a random client secret the proxy swaps for the sandbox's, and
the tokens the sandbox actually issued, captured by the proxy), so a hit in the scan can only be
a leak, never a coincidence.
"""

from __future__ import annotations

import secrets
import subprocess
from pathlib import Path

import duckdb

from .drills import DrillOutcome, Lab, judge_against_reference
from .proxy import DrillProxy, Exchange, Fetch, Reply
from .runner import CLIENT_ID, CLIENT_SECRET, SyncResult
from .scan import Scanner
from .warehouse import compare_warehouses

# The PII columns: email, phone and address (the pipeline may cover more).
PII_COLUMNS = frozenset({
    "email", "phone_number", "business_number", "address_line_1", "address_line_2",
    "address_city", "address_state", "address_country", "address_zip",
})
# The resources whose records carry email, phone or address attributes.
PII_RESOURCES = ("contacts", "customers", "form_submissions", "purchases")
REFUSAL_WORDS = ("insecure", "https", "plain http", "http://")
TLS_WORDS = ("certificate", "ssl", "tls", "verify")


def secret_scan_drill(lab: Lab) -> DrillOutcome:
    """Sync (ok, incremental, failing auth, wrong secret) with debug logs on; scan everything."""
    out = DrillOutcome("secrets_never_leak", "", "")
    lab.reference  # noqa: B018
    secret = f"drill-secret-{secrets.token_hex(12)}"
    wrong = f"drill-wrong-{secrets.token_hex(12)}"
    ws = lab.workspace("security")
    ws.extra_env = {"RUNTIME__LOG_LEVEL": "DEBUG"}
    runs: list[SyncResult] = []
    with lab.sandbox() as sb, DrillProxy(sb.base_url, secret_map={secret: CLIENT_SECRET}) as proxy:
        runs.append(ws.sync(proxy.base_url, "--verbose", client_secret=secret))
        runs.append(ws.sync(proxy.base_url, "--verbose", client_secret=secret))
        if not all(r.ok for r in runs):
            out.fail("syncs with the unique secret failed: " + runs[-1].describe())
        judge_against_reference(out, lab, ws)

        def refuse_contacts(ex: Exchange, fetch: Fetch) -> Reply:
            if ex.collection == "contacts":
                return Reply(401, [("Content-Type", "application/json"),
                                   ("WWW-Authenticate", 'Bearer error="invalid_token"')],
                             b'{"errors":[{"status":"401","title":"Unauthorized"}]}')
            return fetch()

        proxy.mutator = refuse_contacts
        runs.append(ws.sync(proxy.base_url, "--verbose", "--resources", "contacts",
                            client_secret=secret, timeout=240))
        proxy.mutator = None
        runs.append(ws.sync(proxy.base_url, "--verbose", client_secret=wrong, timeout=240))
        tokens = set(proxy.tokens)
    if runs[2].ok or runs[3].ok:
        out.fail("a sync refused by the API (401) or with a wrong secret exited 0")
    if len(tokens) < 2:
        out.fail(f"the drill captured too few tokens to be meaningful: {len(tokens)}")
    needles = {"client_secret": secret, "wrong_client_secret": wrong}
    needles.update({f"token #{i + 1}": t for i, t in enumerate(sorted(tokens))})
    scanner = Scanner(needles, client_id=CLIENT_ID)
    findings = scanner.scan_tree(ws.root)
    for i, run in enumerate(runs):
        findings += scanner.scan_text(run.stdout + run.stderr, f"output of run {i + 1}")
    for f in sorted({str(f) for f in findings}):
        out.fail(f)
    files = sum(1 for p in ws.root.rglob("*") if p.is_file())
    out.faults = f"4 runs (debug logs, 401s, wrong secret); {len(tokens)} tokens; {files} files scanned"
    out.outcome = "no secret or token found" if out.ok else "SECRET LEAKED"
    return out


def plain_http_drill(lab: Lab) -> DrillOutcome:
    """http:// to a non-loopback host is refused; --insecure lets it through."""
    out = DrillOutcome("plain_http_refused", "http:// non-loopback base URL", "")
    ws = lab.workspace("plain_http")
    host = "http://creator-platform.example"
    refused = ws.sync(host, timeout=60)
    line = refused.reason.lower()
    if refused.ok or not any(w in line for w in REFUSAL_WORDS):
        out.fail(f"plain http to {host} was not refused clearly: {refused.describe()}")
    with lab.sandbox() as sb, DrillProxy(sb.base_url) as proxy:
        # The only way to reach a non-loopback name here is through an HTTP proxy: route it to
        # ours so an allowed run can actually complete.
        ws.extra_env = {"HTTP_PROXY": proxy.base_url, "http_proxy": proxy.base_url,
                        "NO_PROXY": "", "no_proxy": ""}
        allowed = ws.sync(host, "--insecure", "--resources", "contacts", timeout=240)
        ws.extra_env = {}
        reached = len(proxy.exchanges)
    if not allowed.ok and "insecure" in allowed.reason.lower():
        out.fail(f"--insecure did not lift the refusal: {allowed.error_line!r}")
    out.outcome = (f"refused without --insecure; with it: "
                   f"{'synced' if allowed.ok else 'not refused'} ({reached} requests)"
                   if out.ok else "FAILED")
    return out


def make_self_signed(directory: Path) -> tuple[str, str]:
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
         "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )
    return str(cert), str(key)


def tls_verify_drill(lab: Lab, control: bool = False, clear_message: bool = True) -> DrillOutcome:
    """A self-signed HTTPS server in front of the sandbox must be rejected by default.

    `control` also syncs with that certificate trusted (SSL_CERT_FILE), proving the refusal was
    the verification and nothing else; `clear_message` also requires the error to say so.
    """
    out = DrillOutcome("tls_verified", "self-signed certificate on https://127.0.0.1", "")
    ws = lab.workspace("selfsigned")
    certs = make_self_signed(ws.root)
    with lab.sandbox() as sb, DrillProxy(sb.base_url, tls=certs) as proxy:
        run = ws.sync(proxy.base_url, timeout=120)
        if control:
            trusted = lab.workspace("selfsigned_trusted")
            trusted.extra_env = {"SSL_CERT_FILE": certs[0]}
            check = trusted.sync(proxy.base_url, timeout=240)
            out.details.append(f"control, certificate trusted via SSL_CERT_FILE: rc={check.returncode}")
            if not check.ok:
                out.fail(f"control sync with the certificate trusted failed: {check.describe()}")
    line = run.reason.lower()
    out.details.append(f"reason: {run.reason}")
    if run.ok:
        out.fail("the sync accepted a self-signed certificate")
    elif clear_message and not any(w in line for w in TLS_WORDS):
        out.fail(f"the refusal does not say it is about the certificate: {run.error_line!r}")
    if ws.warehouse.exists():
        rows = _business_rows(ws.warehouse)
        if rows:
            out.fail(f"data was loaded from an unverified server: {rows} rows")
    out.outcome = ("rejected: " + run.reason[:80]) if out.ok else "FAILED"
    return out


def _business_rows(path: Path) -> int:
    con = duckdb.connect(str(path), read_only=True)
    try:
        tables = con.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_name NOT LIKE '\\_dlt%' ESCAPE '\\'"
        ).fetchall()
        return sum(con.execute(f'SELECT count(*) FROM "{s}"."{t}"').fetchone()[0] for s, t in tables)
    finally:
        con.close()


def gitignore_drill(repo: Path) -> DrillOutcome:
    """`.dlt/secrets.toml` is ignored by git and no secrets file is tracked."""
    out = DrillOutcome("secrets_toml_gitignored", "git check-ignore", "")
    check = subprocess.run(["git", "-C", str(repo), "check-ignore", "-q", ".dlt/secrets.toml"],
                           capture_output=True)
    if check.returncode != 0:
        out.fail(".dlt/secrets.toml is not git-ignored")
    tracked = subprocess.run(["git", "-C", str(repo), "ls-files", "*secrets.toml"],
                             capture_output=True, text=True).stdout.split()
    if tracked:
        out.fail(f"secrets files are tracked: {tracked}")
    out.outcome = "ignored, none tracked" if out.ok else "FAILED"
    return out


def _pii_values(path: Path, dataset: str = "creator_platform", limit: int = 300) -> dict[str, set[str]]:
    """Distinctive plaintext PII values of the reference (emails, phone numbers, street lines)."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        cols = con.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = ? "
            "AND column_name IN ('email', 'phone_number', 'business_number', 'address_line_1')",
            [dataset],
        ).fetchall()
        out: dict[str, set[str]] = {}
        for table, column in cols:
            rows = con.execute(
                f'SELECT DISTINCT "{column}" FROM "{dataset}"."{table}" WHERE length("{column}") >= 6 '
                f"LIMIT {limit}"
            ).fetchall()
            out.setdefault(column, set()).update(r[0] for r in rows)
        return out
    finally:
        con.close()


def pii_drill(lab: Lab, mode: str) -> DrillOutcome:
    """`--pii drop|hash`: no plaintext email/phone/address anywhere; everything else intact."""
    out = DrillOutcome(f"pii_{mode}", f"--pii {mode}", "")
    ref = lab.reference
    plain = _pii_values(ref)
    if not plain.get("email"):
        out.fail("the reference has no emails: the drill would prove nothing")
    ws = lab.workspace(f"pii_{mode}")
    with lab.sandbox() as sb:
        run = ws.sync(sb.base_url, "--pii", mode, "--resources", ",".join(PII_RESOURCES))
    if not run.ok:
        out.fail(f"sync with --pii {mode} failed: {run.describe()}")
        out.outcome = "FAILED"
        return out
    from creator_sync.sources.creator_platform.endpoints import PII_ANY_COLUMNS as PIPELINE_PII

    cmp = compare_warehouses(ref, ws.warehouse, exclude_columns=PII_COLUMNS | PIPELINE_PII)
    problems = [d.describe() for t, d in cmp.tables.items()
                if not d.ok and d.drill_rows]  # tables of other resources were not synced
    if not cmp.tables.get("contacts") or not cmp.tables["contacts"].drill_rows:
        problems.append("no contacts were loaded")
    if problems:
        out.fail("non-PII data differs from the reference:\n  " + "\n  ".join(problems))
    needles = {f"{col} {i}": v for col, values in plain.items() for i, v in enumerate(sorted(values))}
    found = Scanner(needles).scan_tree(ws.root)
    if found:
        out.fail(f"{len(found)} plaintext PII hits, e.g. {sorted({str(f) for f in found})[:5]}")
    con = duckdb.connect(str(ws.warehouse), read_only=True)
    try:
        present = con.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = "
            "'creator_platform' AND column_name IN (SELECT unnest(?::VARCHAR[]))",
            [sorted(PII_COLUMNS)],
        ).fetchall()
        if mode == "drop":
            filled = [f"{t}.{c}" for t, c in present
                      if con.execute(f'SELECT count("{c}") FROM creator_platform."{t}"').fetchone()[0]]
            if filled:
                out.fail(f"--pii drop left values in {filled}")
        else:
            for problem in _hash_problems(con, ref):
                out.fail(problem)
    finally:
        con.close()
    out.outcome = f"no plaintext PII ({sum(len(v) for v in plain.values())} values checked)" \
        if out.ok else "FAILED"
    return out


def _hash_problems(con: duckdb.DuckDBPyConnection, ref: Path) -> list[str]:
    """Hashed emails stay joinable: one hash per distinct email, equal across tables."""
    problems = []
    con.execute(f"ATTACH '{ref}' AS ref (READ_ONLY)")
    pairs = con.execute(
        "SELECT r.email, d.email FROM ref.creator_platform.contacts r "
        "JOIN creator_platform.contacts d USING (id) WHERE r.email IS NOT NULL"
    ).fetchall()
    if not pairs:
        return ["no contacts with email to check the hashing on"]
    if any(d is None for _, d in pairs):
        problems.append("--pii hash nulled emails instead of hashing them")
    mapping: dict[str, set[str]] = {}
    for plain, hashed in pairs:
        mapping.setdefault(plain.strip().lower(), set()).add(hashed)
    if any(len(v) > 1 for v in mapping.values()):
        problems.append("the same email hashed to different values")
    if len({h for v in mapping.values() for h in v}) != len(mapping):
        problems.append("different emails hashed to the same value")
    cross = con.execute(
        "SELECT count(*) FROM creator_platform.contacts c JOIN creator_platform.customers k "
        "ON c.customer_id = k.id WHERE c.email IS DISTINCT FROM k.email"
    ).fetchone()[0]
    if cross:
        problems.append(f"{cross} contact/customer pairs no longer share a hashed email")
    return problems
