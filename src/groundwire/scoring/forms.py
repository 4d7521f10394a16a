"""Which form of a bundle's model to run on this CPU: int8, or fp32 where int8 kernels are slow.

A bundle's config.json may list forms ({"int8": {...}, "fp32": {...}}, written by `train/forms.py`); a bundle
without the list has one form, its `model_file`. The rule (measured in issue 35):
  - a CPU with VNNI (AVX512-VNNI, AVX-VNNI or AMX) runs int8, which is faster there than fp32 (docs/speed.md);
  - on any other CPU the int8 kernels lose VNNI's fused multiply-add while fp32 ones do not depend on it, so the
    scorer times both forms on a few pairs when it loads and keeps the faster. It switches to fp32 only when that
    is clearly faster (`FP32_MARGIN`), so that a noisy timing cannot flip the choice between runs on one machine.
    The timings are kept in the user's cache per CPU, bundle and onnxruntime (scoring/form_trials.py), so the
    trial runs once per machine, not in every process.
A form asked for (the scorer "bundled:int8" or "bundled:fp32", or GROUNDWIRE_MODEL_FORM) skips the rule.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groundwire.scoring.form_trials import FormTrials

__all__ = [
    "FORM_NAMES",
    "TRIAL_PAIRS",
    "CpuFeatures",
    "ModelForm",
    "bundle_forms",
    "choose_form",
    "cpu_features",
    "usable_cores",
]

FORM_NAMES: tuple[str, ...] = ("auto", "int8", "fp32")
FP32_MARGIN = 1.2
"""fp32 is chosen on a CPU without VNNI only when it scores the trial pairs this many times faster than int8."""
_VNNI_FLAGS = frozenset({"avx512_vnni", "avx_vnni", "amx_int8", "avx_vnni_int8"})

TRIAL_PAIRS = tuple(
    (
        f"The {topic} desk of the Harbour Street branch opens at {8 + i} am on weekdays and closes at {4 + i} pm. "
        f"Requests sent after {2 + i} pm are answered on the next working day, and a fee of ${3 + i} applies to "
        "every request made by phone rather than through the online form, which most customers use.",
        f"The {topic} desk closes at {4 + i} pm on weekdays.",
    )
    for i, topic in enumerate(("billing", "returns", "repairs", "delivery"))
)
"""The pairs a CPU without VNNI times each form on (about 70 tokens each, like a short window)."""


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity where the platform has one (taskset, a container's
    cpuset), else every core."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


@dataclass(frozen=True, slots=True)
class CpuFeatures:
    """What the int8 kernels care about. `vnni` is None where the flags cannot be read (not Linux)."""

    model: str
    vnni: bool | None
    avx512: bool
    avx2: bool
    cores: int

    @property
    def cpu_class(self) -> str:
        """A short name for tables: "avx512 + vnni", "avx2, no vnni", ..."""
        vector = "avx512" if self.avx512 else "avx2" if self.avx2 else "no avx2"
        vnni = {True: "vnni", False: "no vnni", None: "vnni unknown"}[self.vnni]
        return f"{vector}, {vnni}"


def cpu_features(cpuinfo: str | None = None) -> CpuFeatures:
    """Read /proc/cpuinfo's first processor (or `cpuinfo`, for tests)."""
    if cpuinfo is None:
        path = Path("/proc/cpuinfo")
        cpuinfo = path.read_text(errors="replace") if path.is_file() else ""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        if not line.strip():
            if fields:
                break
            continue
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    flags = set(fields.get("flags", "").split())
    return CpuFeatures(
        model=fields.get("model name") or platform.processor() or platform.machine(),
        vnni=bool(flags & _VNNI_FLAGS) if flags else None,
        avx512="avx512f" in flags,
        avx2="avx2" in flags,
        cores=usable_cores(),
    )


@dataclass(frozen=True, slots=True)
class ModelForm:
    """One way to run a bundle's model: its ONNX file, pairs per run and the session settings it needs."""

    name: str
    model_file: str
    batch_size: int
    session_config: Mapping[str, str] = field(default_factory=dict)


def bundle_forms(config: Mapping[str, Any]) -> dict[str, ModelForm]:
    """The forms a bundle's config.json lists, else its one model file as "int8" (or "model" for an fp32 export
    that says so). Insertion order is preference order."""
    listed = config.get("forms")
    if not listed:
        return {
            "int8": ModelForm("int8", str(config.get("model_file", "model.onnx")), int(config.get("batch_size", 32)))
        }
    return {
        str(name): ModelForm(
            str(name),
            str(block["model_file"]),
            int(block.get("batch_size", 1)),
            {str(k): str(v) for k, v in block.get("session_config", {}).items()},
        )
        for name, block in listed.items()
    }


def choose_form(
    forms: Mapping[str, ModelForm],
    wanted: str,
    cpu: CpuFeatures,
    time_form: Callable[[ModelForm], float],
    trials: FormTrials | None = None,
) -> tuple[ModelForm, str]:
    """The form to run and why (for `groundwire doctor` and the logs). `time_form` gives a form's seconds on the
    trial pairs; it is called only on a CPU without VNNI that has both forms, and then only when `trials` (where
    the timings are kept) holds none for this CPU and bundle."""
    if wanted not in FORM_NAMES:
        raise ValueError(f"model form {wanted!r} is not one of {', '.join(FORM_NAMES)}")
    if wanted != "auto":
        if wanted not in forms:
            raise ValueError(
                f"this bundle has no {wanted!r} form (it has {', '.join(forms)}); "
                "build one with `groundwire train fp32-form`"
            )
        return forms[wanted], "asked for"
    first = next(iter(forms.values()))
    if "int8" not in forms or "fp32" not in forms:
        return first, "the bundle's only form"
    if cpu.vnni or cpu.vnni is None:
        return forms["int8"], "int8 kernels use VNNI here" if cpu.vnni else "CPU flags unknown: int8"
    if trials is None:
        int8_s, fp32_s, when = time_form(forms["int8"]), time_form(forms["fp32"]), "timed now"
    elif (kept := trials.recall()) is not None:
        int8_s, fp32_s, when = kept.int8_s, kept.fp32_s, f"timed {kept.timed_at}, kept in {trials.path}"
    else:
        int8_s, fp32_s = time_form(forms["int8"]), time_form(forms["fp32"])
        not_kept = trials.keep(int8_s, fp32_s)
        when = f"timed now, kept in {trials.path}"
        if not_kept is not None:
            when = f"timed now, not kept ({not_kept}: timed again by every process)"
    if fp32_s * FP32_MARGIN <= int8_s:
        return forms["fp32"], f"no VNNI; fp32 timed {int8_s / fp32_s:.2f}x faster than int8 ({when})"
    return forms["int8"], f"no VNNI; fp32 timed only {int8_s / fp32_s:.2f}x int8's speed ({when})"
