"""Stacks as users install them, checked from outside (exploratory testing of `check`, `check
--emit` and `env`): each test is a case that once answered wrongly. Environments are prefixes of
dist-info folders and clones are small git repositories, made here (no network)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Optional, Tuple

from .test_stack_installs import _layer, _prefix


def _check_in(cwd: Path, env: Path, *args: str) -> Tuple[int, dict, str]:
    """``check --json --env ENV ARGS`` run in the folder ``cwd`` (where a ./compat.yaml is found)."""
    proc = subprocess.run(
        [sys.executable, "-m", "adapter_matrix", "check", "--json", "--no-binary", "--env", str(env), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**{k: v for k, v in os.environ.items() if not k.startswith("ASCEND_")}, "ADAPTER_MATRIX_NO_MEMO": "1"},
    )
    document: Optional[dict] = json.loads(proc.stdout) if proc.stdout else None
    assert document is not None, proc.stderr
    return proc.returncode, document, proc.stderr


def test_a_layer_given_alone_is_judged_on_the_matrix_its_installed_adapter_registers(tmp_path):
    # `check --matrix LAYER.yaml`, or `check` in the layer's own clone (its ./compat.yaml): the
    # adapter below it is installed and registers its matrix, which was then "not found"
    env = tmp_path / "env"
    _prefix(env, python="3.11", torch="2.10.0", torch_npu="2.10.0.post4")
    clone = tmp_path / "MindSpeed-LLM"
    clone.mkdir()
    _layer(clone / "compat.yaml", "mindspeed-llm", "26.1.0", "    torch: 2.10.0\n    adapter: 2.10.0.post4\n")
    for args in (["--matrix", str(clone / "compat.yaml")], []):
        code, doc, err = _check_in(clone, env, *args, "--set", "cann=9.1.0", "--set", "arch=aarch64")
        assert "no matrix of torch-npu was found" not in err
        (answer,) = doc["checks"]
        assert answer["adapter"] == "torch-npu" and answer["matrix"].endswith("torch_npu/compat.yaml")
        (layer,) = answer["stack"]["layers"]
        # not installed, so judged as a layer that is absent; the adapter's own verdict stands
        assert layer["name"] == "mindspeed-llm" and code != 2, err
