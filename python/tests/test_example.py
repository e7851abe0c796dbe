"""The notebook-style example runs and writes its figure."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import REPO


def test_falling_sphere_example_writes_its_figure(tmp_path):
    out = tmp_path / "falling_sphere.png"
    subprocess.run(
        [sys.executable, str(REPO / "examples" / "python" / "falling_sphere.py"), str(out)],
        cwd=REPO, check=True, env={**os.environ, "MPLBACKEND": "Agg"},
    )
    assert out.stat().st_size > 10_000
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
