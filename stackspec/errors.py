"""The one error type the stack spec raises: it names the file, the field and the fix."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a stack: where (field path), what, and how to fix it."""

    field: str
    message: str
    fix: str = ""

    def render(self) -> str:
        text = f"{self.field}: {self.message}" if self.field else self.message
        if self.fix:
            text += f" Fix: {self.fix}"
        return text


@dataclass
class StackSpecError(Exception):
    """Invalid stack input. ``str()`` is the whole user-facing message; never a traceback."""

    source: str
    problems: list[Problem] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__(str(self))

    @classmethod
    def single(cls, source: str, field_path: str, message: str, fix: str = "") -> "StackSpecError":
        return cls(source, [Problem(field_path, message, fix)])

    def __str__(self) -> str:
        if len(self.problems) == 1:
            return f"{self.source}: {self.problems[0].render()}"
        lines = [f"{self.source}: {len(self.problems)} problems"]
        lines += [f"  - {p.render()}" for p in self.problems]
        return "\n".join(lines)
