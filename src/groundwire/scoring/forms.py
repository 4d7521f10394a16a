"""Which form of a bundle's model to run on this CPU: int8, or another form where int8 kernels are slow.

A bundle's config.json may list forms ({"int8": {...}, "fp32": {...}, "blockwise": {...}}, written by
`train/forms.py`); a bundle without the list has one form, its `model_file`. The rule (measured in issue 35):
  - a CPU with VNNI (AVX512-VNNI, AVX-VNNI or AMX) runs int8, which is faster there than the others (docs/speed.md);
  - on any other CPU the int8 kernels lose VNNI's fused multiply-add, while fp32 kernels do not depend on it and
    the blockwise form runs other int8 kernels (MatMulNBits), so the scorer times every form this onnxruntime can
    run on a few pairs when it loads and keeps the fastest. It leaves int8 only for a form clearly faster
    (`MARGIN`), so that a noisy timing cannot flip the choice between runs on one machine. The timings are kept in
    the user's cache per CPU, bundle and onnxruntime (scoring/form_trials.py), so the trial runs once per machine,
    not in every process.
A form asked for (the scorer "bundled:<form>", or GROUNDWIRE_MODEL_FORM) skips the rule.
"""

from __future__ import annotations

import itertools
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

FORM_NAMES: tuple[str, ...] = ("auto", "int8", "fp32", "blockwise")
MARGIN = 1.2
"""Another form is chosen over int8 on a CPU without VNNI only when it scores the trial pairs this many times
faster."""
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
    min_onnxruntime: str | None = None
    """The oldest onnxruntime with kernels for this form's operators, where that is newer than groundwire's floor."""

    def runs_on(self, onnxruntime_version: str) -> bool:
        """Whether this onnxruntime has the form's kernels."""
        return self.min_onnxruntime is None or _release(onnxruntime_version) >= _release(self.min_onnxruntime)


def _release(version: str) -> tuple[int, ...]:
    """(1, 22) for "1.22", "1.22.0" or "1.22.0.dev20250101": the numbers a minimum version is compared on."""
    numbers = []
    for part in version.split(".")[:3]:
        digits = "".join(itertools.takewhile(str.isdigit, part))
        if not digits:
            break
        numbers.append(int(digits))
    return tuple(numbers)


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
            str(block["min_onnxruntime"]) if block.get("min_onnxruntime") else None,
        )
        for name, block in listed.items()
    }


def choose_form(
    forms: Mapping[str, ModelForm],
    wanted: str,
    cpu: CpuFeatures,
    time_form: Callable[[ModelForm], float],
    trials: FormTrials | None = None,
    *,
    onnxruntime_version: str | None = None,
) -> tuple[ModelForm, str]:
    """The form to run and why (for `groundwire doctor` and the logs). `time_form` gives a form's seconds on the
    trial pairs; it is called only on a CPU without VNNI whose onnxruntime runs int8 and another form, and then
    only when `trials` (where the timings are kept) holds none for this CPU and bundle. Forms that need a newer
    onnxruntime than `onnxruntime_version` are left out (None: every form runs)."""
    if wanted not in FORM_NAMES:
        raise ValueError(f"model form {wanted!r} is not one of {', '.join(FORM_NAMES)}")
    if wanted != "auto":
        if wanted not in forms:
            build = f"; build one with `groundwire train {wanted}-form`" if wanted != "int8" else ""
            raise ValueError(f"this bundle has no {wanted!r} form (it has {', '.join(forms)}){build}")
        form = forms[wanted]
        if onnxruntime_version is not None and not form.runs_on(onnxruntime_version):
            raise ValueError(
                f"the {wanted!r} form needs onnxruntime >= {form.min_onnxruntime} (this is {onnxruntime_version})"
            )
        return form, "asked for"
    runnable = {
        name: form for name, form in forms.items() if onnxruntime_version is None or form.runs_on(onnxruntime_version)
    }
    if "int8" not in runnable or len(runnable) == 1:
        return next(iter(runnable.values() or forms.values())), "the bundle's only form"
    if cpu.vnni or cpu.vnni is None:
        return forms["int8"], "int8 kernels use VNNI here" if cpu.vnni else "CPU flags unknown: int8"
    kept = trials.recall() if trials is not None else None
    if trials is not None and kept is not None and set(kept.seconds) == set(runnable):
        seconds, when = dict(kept.seconds), f"timed {kept.timed_at}, kept in {trials.path}"
    else:
        seconds = {name: time_form(form) for name, form in runnable.items()}
        not_kept = trials.keep(seconds) if trials is not None else None
        when = "timed now" if trials is None else f"timed now, kept in {trials.path}"
        if not_kept is not None:
            when = f"timed now, not kept ({not_kept}: timed again by every process)"
    int8_s = seconds["int8"]
    fastest = min(seconds, key=seconds.__getitem__)
    if fastest != "int8" and seconds[fastest] * MARGIN <= int8_s:
        return forms[fastest], f"no VNNI; {fastest} timed {int8_s / seconds[fastest]:.2f}x faster than int8 ({when})"
    others = ", ".join(f"{name} {int8_s / s:.2f}x" for name, s in seconds.items() if name != "int8")
    return forms["int8"], f"no VNNI; no form timed {MARGIN}x int8's speed ({others}; {when})"
