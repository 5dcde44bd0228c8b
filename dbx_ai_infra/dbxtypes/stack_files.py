"""Stack files as files: where the shipped stacks are, the file a stack name means, a path as messages show it, and
the line each setting is written on (where findings point).

Reading and validating what a stack file says is `dbx_ai_infra.stackspec`'s; these helpers sit here, at the bottom,
so that the commands and reports that only name or locate a stack file (``--out`` against the run's inputs, a
SARIF region) do not load the stack spec's models: ``audit`` of a workspace export never does.
"""

from __future__ import annotations

from pathlib import Path

from dbx_ai_infra import PACKAGE_DIR

from .documents import compose_yaml, key_lines, not_a_file, read_text
from .errors import InputError
from .vocabulary import PROJECT

#: The shipped stacks: the checkout's stacks/ (Pulumi.yaml's stackConfigDir), or their copies in an installed package.
STACKS_DIR = next((d for d in (PACKAGE_DIR.parent / "stacks", PACKAGE_DIR / "stacks")
                   if (d.parent / "Pulumi.yaml").is_file() or d.parent == PACKAGE_DIR), PACKAGE_DIR / "stacks")


def display_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except (ValueError, OSError, RuntimeError):  # outside the cwd, or a symbolic link loop
        return str(path)


def available_stacks(stacks_dir: Path = STACKS_DIR) -> list[str]:
    return sorted(p.name[len("Pulumi."):-len(".yaml")] for p in stacks_dir.glob("Pulumi.*.yaml"))


def stack_file_for(stack: str, stacks_dir: Path = STACKS_DIR) -> Path:
    """A stack name (``dev``) means ``stacks/Pulumi.dev.yaml``; anything path-like is a file."""
    looks_like_path = "/" in stack or stack.endswith((".yaml", ".yml")) or Path(stack).exists()
    path = Path(stack) if looks_like_path else stacks_dir / f"Pulumi.{stack}.yaml"
    if not path.is_file():
        names = ", ".join(available_stacks(stacks_dir)) or "none"
        what = "stack file" if looks_like_path else f"stack {stack!r}"
        raise InputError.single(
            display_path(path), "", f"{what} {not_a_file(path)}.",
            f"pass a stack name ({names}) or the path of a stack YAML file.")
    return path


def section_lines(path: Path) -> dict[str, int]:
    """The line of each ``dbx-ai-infra:<setting>`` in a stack file, by its bare name (``training``, ``tags``, ...), and
    of each field below it by its dotted path (``inference.min_workers``, ``serving.endpoints.chat.scale_to_zero``,
    three levels down); ``config`` itself under ``""``. Findings point there."""
    tree = compose_yaml(read_text(path, "stack file"), display_path(path))  # one parse for every mapping in it
    lines = {"": key_lines(tree).get("config", 1)}

    def walk(path: tuple[str, ...], dotted: str, depth: int) -> None:
        for key, line in key_lines(tree, path).items():
            name = f"{dotted}.{key}" if dotted else key.removeprefix(f"{PROJECT}:")
            lines[name] = line
            if depth < 3:  # serving.endpoints.<name>.<field>
                walk((*path, key), name, depth + 1)

    walk(("config",), "", 0)
    return lines
