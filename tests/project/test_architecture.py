"""The architecture is enforced: layers by import-linter, the public API by dreamer/__init__."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import dreamer

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")


def _lint(tmp_path: Path, mutate=None) -> subprocess.CompletedProcess[str]:
    copy = tmp_path / "src"
    shutil.copytree(
        ROOT / "dreamer", copy / "dreamer", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    if mutate:
        mutate(copy / "dreamer")
    env = {**os.environ, "PYTHONPATH": str(copy)}
    return subprocess.run(
        [LINT_IMPORTS, "--no-cache"], cwd=copy, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.slow
@pytest.mark.skipif(not Path(LINT_IMPORTS).exists(), reason="import-linter is a test extra")
def test_the_layers_hold_and_an_upward_import_breaks_them(tmp_path):
    clean = _lint(tmp_path / "clean")
    assert clean.returncode == 0, clean.stdout + clean.stderr

    def store_imports_the_cli(package: Path) -> None:
        base = package / "store" / "base.py"
        base.write_text(base.read_text() + "\nfrom dreamer.cli import main  # noqa\n")

    broken = _lint(tmp_path / "broken", store_imports_the_cli)
    assert broken.returncode != 0
    assert re.search(r"dreamer\.store is not allowed to import dreamer\.cli", broken.stdout)


def test_no_sql_outside_the_store():
    sql = re.compile(r"\b(SELECT|INSERT INTO|UPDATE \w+ SET|DELETE FROM|CREATE TABLE)\b")
    offenders = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "dreamer").rglob("*.py")
        if "store" not in path.relative_to(ROOT / "dreamer").parts[:1]
        and sql.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_every_public_name_resolves():
    for name in dreamer.__all__:
        assert getattr(dreamer, name) is not None, name
    with pytest.raises(AttributeError):
        dreamer.no_such_name  # noqa: B018


def test_no_import_cycle_inside_the_package():
    grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter (a test extra)")
    # TYPE_CHECKING imports count: a cycle through them is still two modules that need each
    # other, and the way out (a small Protocol) is the same.
    graph = grimp.build_graph("dreamer", cache_dir=None)
    cycles = sorted(
        f"{module} <-> {imported}"
        for module in graph.modules
        for imported in graph.find_modules_directly_imported_by(module)
        if module < imported and graph.chain_exists(importer=imported, imported=module)
    )
    assert cycles == []
