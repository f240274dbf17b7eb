"""The runner's build time, two checkouts side by side on the same warehouse (issue 31: the
Jinja runner is no slower than the regular-expression one it replaced).

    .venv/bin/python benchmarks/models_build.py WAREHOUSE.duckdb BASE_CHECKOUT NEW_CHECKOUT [-n 7]

Each round copies the warehouse (raw tables only matter) and builds it once per checkout, in a
fresh process with that checkout first on the path, alternating which goes first; prints the
median build seconds (models; models + data tests) per checkout and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BUILD = (
    "import json, sys; from creator_sync.models.runner import run_models; r = run_models(sys.argv[1]); "
    "print(json.dumps({'models': sum(m.seconds for m in r.models), 'total': r.seconds}))"
)


def build_once(checkout: Path, warehouse: Path, work: Path) -> dict[str, float]:
    copy = work / "w.duckdb"
    shutil.copyfile(warehouse, copy)
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run([sys.executable, "-c", BUILD, str(copy)], cwd=work, env=env,
                          capture_output=True, text=True, check=True)
    copy.unlink()
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("warehouse", type=Path)
    parser.add_argument("base", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("-n", type=int, default=7)
    args = parser.parse_args()
    runs: dict[str, list[dict[str, float]]] = {"base": [], "new": []}
    checkouts = {"base": args.base.resolve(), "new": args.new.resolve()}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.n):
            for name in (("base", "new") if i % 2 == 0 else ("new", "base")):
                runs[name].append(build_once(checkouts[name], args.warehouse, Path(tmp)))
    medians = {name: {k: statistics.median(r[k] for r in rs) for k in ("models", "total")}
               for name, rs in runs.items()}
    for name, m in medians.items():
        print(f"{name:5} models {m['models']:.3f}s  models+tests {m['total']:.3f}s  "
              f"(median of {args.n}, {checkouts[name]})")
    print(f"new / base: models {medians['new']['models'] / medians['base']['models']:.2f}, "
          f"models+tests {medians['new']['total'] / medians['base']['total']:.2f}")


if __name__ == "__main__":
    main()
