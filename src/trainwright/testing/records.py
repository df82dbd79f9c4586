"""What the oracle records of one training program: plain data, read from the child's JSON.

A ``Record`` holds one ``Phase`` per run the oracle makes (``ga1/train``, ``ga1/resume``,
``ga2/train`` ...) and the files all of them wrote. Everything in it is already normalised by the
child (no timestamps, no run-time speeds, no absolute paths, numbers printed to 4 significant
digits), so two records of the same behaviour are equal except for floating-point noise, which
``compare`` tolerates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Step:
    """One optimiser step: its training loss and gradient norm as the Trainer logged them."""

    step: int
    loss: float | None
    grad_norm: float | None


@dataclass(frozen=True)
class Phase:
    """One ``train()`` call (fresh or resumed) and what followed it (``save_model``)."""

    name: str
    steps: tuple[Step, ...] = ()
    log_history: tuple[dict[str, Any], ...] = ()
    # ``step:should_log,should_evaluate,should_save,should_training_stop`` after each step's callbacks.
    controls: tuple[str, ...] = ()
    events: tuple[str, ...] = ()  # ``on_step_end@3``: every callback event the Trainer dispatched
    lines: tuple[str, ...] = ()  # ``@3 text``: printed and logged lines of the user's code
    params_hash: str = ""  # the final parameters, each rounded to 6 significant digits
    param_norms: tuple[float, ...] = ()
    error: str | None = None  # ``TypeError: ...`` when the phase raised


@dataclass(frozen=True)
class Record:
    """Everything the oracle saw of one program at one transformers release."""

    release: str  # the transformers version the child imported
    phases: tuple[Phase, ...] = ()
    files: dict[str, str] = field(default_factory=dict)  # relative path -> normalised content hash
    error: str | None = None  # set-up failed (the module did not import, no Trainer class ...)
    # names the release lacks that the program imports, stood in for (``trainwright.testing.standins``)
    stand_ins: tuple[str, ...] = ()
    arguments: str = ""  # the project's own arguments class the run was given (``_project_args``)
    # library attributes the program rebound, put back after it (``_library_guard``)
    patched: tuple[str, ...] = ()

    def phase(self, name: str) -> Phase | None:
        return next((p for p in self.phases if p.name == name), None)

    @property
    def failed(self) -> bool:
        """Whether set-up or any phase raised."""
        return self.error is not None or any(p.error is not None for p in self.phases)


def record_from_json(data: dict[str, Any]) -> Record:
    """The ``Record`` the child wrote as JSON."""
    phases = tuple(
        Phase(
            name=p["name"],
            steps=tuple(Step(**s) for s in p.get("steps", ())),
            log_history=tuple(p.get("log_history", ())),
            controls=tuple(p.get("controls", ())),
            events=tuple(p.get("events", ())),
            lines=tuple(p.get("lines", ())),
            params_hash=p.get("params_hash", ""),
            param_norms=tuple(p.get("param_norms", ())),
            error=p.get("error"),
        )
        for p in data.get("phases", ())
    )
    return Record(
        release=data.get("release", "?"),
        phases=phases,
        files=dict(data.get("files", {})),
        error=data.get("error"),
        stand_ins=tuple(data.get("stand_ins", ())),
        arguments=data.get("arguments") or "",
        patched=tuple(data.get("patched", ())),
    )
