"""Issue 56, item 2: each failure the command line explains (`dbx_ai_infra.cli.cli._FAILURES`) has its own line and
exit code, whatever raised it during a command's work; any other exception is an internal error (exit 3), raised
as it is under STACKPLAN_DEBUG=1."""

from __future__ import annotations

import argparse

import pytest

from dbx_ai_infra.cli import cli
from dbx_ai_infra.dbxtypes.errors import InputError, ProgramError
from dbx_ai_infra.engine import exits
from dbx_ai_infra.sources.workspace import WorkspaceUnavailable


def _main_raising(monkeypatch: pytest.MonkeyPatch, exc: BaseException) -> int:
    """``check --stack dev`` whose work raises ``exc``."""
    real = cli.parser

    def raising(args: argparse.Namespace) -> int:
        raise exc

    def parser() -> argparse.ArgumentParser:
        top = real()
        parse = top.parse_args

        def parse_args(argv: list[str] | None = None) -> argparse.Namespace:  # type: ignore[override]
            args = parse(argv)
            args.func = raising
            return args

        top.parse_args = parse_args  # type: ignore[method-assign,assignment]
        return top

    monkeypatch.setattr(cli, "parser", parser)
    return cli.main(["check", "--stack", "dev"])


@pytest.mark.parametrize(("exc", "line", "code"), [
    (RecursionError("maximum recursion depth exceeded"), "error: an input is nested too deeply to read. Fix: pass a "
     "Databricks export or a stack file as written by their tools.", exits.EXIT_INVALID),
    (InputError.single("a.yaml", "cloud", "is not a cloud.", "use aws."), "error: a.yaml: cloud: is not a cloud. "
     "Fix: use aws.", exits.EXIT_INVALID),
    (ProgramError("the component raised"), "error: the Pulumi program failed: the component raised",
     exits.EXIT_VIOLATIONS),
    (WorkspaceUnavailable("https://x.cloud.databricks.com: 503 on clusters/list"), "error: https://x.cloud.databricks"
     ".com: 503 on clusters/list (not the input's fault: try again later)", exits.EXIT_VIOLATIONS),
])
def test_a_known_failure_is_its_own_line_and_exit_code(monkeypatch, capsys, exc, line, code):
    monkeypatch.delenv("STACKPLAN_DEBUG", raising=False)
    assert _main_raising(monkeypatch, exc) == code
    assert capsys.readouterr().err.splitlines() == [line]


def test_an_interrupt_is_exit_130(monkeypatch, capsys):
    assert _main_raising(monkeypatch, KeyboardInterrupt()) == exits.EXIT_INTERRUPTED
    assert capsys.readouterr().err.strip()


def test_under_stackplan_debug_an_internal_error_is_raised_with_its_traceback(monkeypatch, tmp_path):
    monkeypatch.setenv("STACKPLAN_DEBUG", "1")
    monkeypatch.setenv("STACKPLAN_CACHE_DIR", str(tmp_path))
    with pytest.raises(ZeroDivisionError):
        _main_raising(monkeypatch, ZeroDivisionError("division by zero"))
    assert not (tmp_path / "crashes").exists()  # raised, not written to a file
