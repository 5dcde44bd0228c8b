"""Issue 56, item 7: the exit codes' contract. An internal error is exit 3 (it was 1, a mandatory violation's code, so
a crash read as a policy result), with one line naming the file its traceback went to; standard output on a full disk
or closed by its reader is exit 2 with its own line, never 1 and never a traceback. Real /dev/full and real closed
pipes, in real processes (the buffering of standard output decides where the error comes up)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dbx_ai_infra.engine import exits

REPO = Path(__file__).resolve().parent.parent
PYTHON = [sys.executable, "-m", "stackplan"]


def _errors(stderr: str) -> list[str]:
    """stderr without the stack's notes."""
    return [line for line in stderr.splitlines() if line.strip() and not line.startswith("note: ")]


def _run(argv: list[str], stdout: int, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PYTHON, *argv], cwd=REPO, stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


def _closed_pipe() -> int:
    """The writing end of a pipe whose reader is gone: the first write fails with EPIPE (Python ignores SIGPIPE)."""
    read, write = os.pipe()
    os.close(read)
    return write


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("buffered", ["1", ""])  # PYTHONUNBUFFERED: the error comes at the write or at the flush
@pytest.mark.parametrize("argv", [["check", "--stack", "dev", "--json"], ["--version"], ["cost", "--help"]])
def test_a_full_disk_on_standard_output_is_exit_2_with_its_own_line(argv, buffered):
    """The user's case: `check --stack dev --json > /dev/full` was "unexpected OSError: No space left on device",
    exit 1, on a stack with no violation; `--version` and `--help` said nothing and exited 0."""
    with open("/dev/full", "w") as full:
        result = _run(argv, full.fileno(), {"PYTHONUNBUFFERED": "" if buffered else "1"})
    assert result.returncode == exits.EXIT_INVALID, result.stderr
    assert _errors(result.stderr) == ["error: standard output: cannot be written (No space left on device): the "
                                      "output is incomplete. Fix: free space where standard output goes, or write "
                                      "the output elsewhere with --out FILE."]


@pytest.mark.parametrize("argv", [["check", "--stack", "dev", "--json"], ["sample-usage", "--stack", "dev", "--days",
                                                                         "1", "--out", "{tmp}/usage"]])
def test_standard_output_closed_by_its_reader_is_exit_2_with_its_own_line(tmp_path, argv):
    """`| head -1` over an output larger than the pipe holds: the reader is gone when the rest is written."""
    write = _closed_pipe()
    try:
        result = _run([arg.replace("{tmp}", str(tmp_path)) for arg in argv], write)
    finally:
        os.close(write)
    assert result.returncode == exits.EXIT_INVALID, result.stderr
    errors = _errors(result.stderr)
    assert [line for line in errors if not line.startswith("wrote the exports")] == [
        "error: standard output: was closed before the output was written whole (its reader stopped reading, as "
        "`| head` does). Fix: read the whole output, or write it to a file with --out FILE."]


def test_an_internal_error_is_exit_3_one_line_and_its_traceback_in_a_file(tmp_path):
    """A fault of the program (here a division by zero where the report is written) is exit 3, one line naming the
    file under the cache directory that holds its traceback; never exit 1 (a policy result) or a traceback."""
    cache = tmp_path / "cache"
    crash = ("import sys; from dbx_ai_infra.engine import output; output.write_text = lambda *a, **k: 1 / 0; "
             "sys.argv = ['stackplan', 'check', '--stack', 'dev']; from stackplan.__main__ import run; run()")
    result = subprocess.run([sys.executable, "-c", crash], cwd=REPO, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "STACKPLAN_CACHE_DIR": str(cache)})
    assert result.returncode == exits.EXIT_INTERNAL, result.stderr
    errors = _errors(result.stderr)
    assert len(errors) == 1 and "Traceback" not in result.stderr, result.stderr
    found = re.fullmatch(r"error: internal error, not a policy result: unexpected ZeroDivisionError: division by "
                         r"zero\. the traceback is in (\S+); please include it in a bug report \(STACKPLAN_DEBUG=1 "
                         r"shows it here\)\.", errors[0])
    assert found, errors[0]
    report = Path(found.group(1))
    assert report.parent == cache / "crashes"
    text = report.read_text()
    assert "command: " in text and "Traceback (most recent call last)" in text and "ZeroDivisionError" in text


def test_a_traceback_that_cannot_go_to_the_cache_goes_to_the_temporary_directory(tmp_path, monkeypatch, capsys):
    from dbx_ai_infra.cli import cli

    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setenv("STACKPLAN_CACHE_DIR", str(blocked / "cache"))  # under a regular file: cannot be made
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))

    def crash(args):  # noqa: ANN001, ANN202
        raise RuntimeError("boom")

    code = _main_with(cli, monkeypatch, crash)
    err = capsys.readouterr().err
    assert code == exits.EXIT_INTERNAL, err
    found = re.search(r"the traceback is in (\S+);", err)
    assert found, err
    assert Path(found.group(1)).parent == tmp_path and "RuntimeError: boom" in Path(found.group(1)).read_text()


def _main_with(cli, monkeypatch, crash):  # noqa: ANN001, ANN202
    """``check --stack dev`` with its work replaced by ``crash``."""
    real = cli.parser

    def parser():  # noqa: ANN202
        top = real()
        original = top.parse_args

        def parse_args(argv=None):  # noqa: ANN001, ANN202
            args = original(argv)
            args.func = crash
            return args

        top.parse_args = parse_args
        return top

    monkeypatch.setattr(cli, "parser", parser)
    return cli.main(["check", "--stack", "dev"])


def _table(path: Path, heading: str) -> dict[str, str]:
    """The rows (first cell -> second) of the first table after ``heading`` in a Markdown file."""
    text = path.read_text()
    rows = {}
    for line in text[text.index(heading):].splitlines()[1:]:
        if rows and not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("|") and cells[0] not in ("code", "---") and not set(cells[0]) <= {"-"}:
            rows[cells[0].strip("`")] = cells[1]
    return rows


def test_the_contract_table_is_the_one_in_exits():
    """docs/cli.md's table states dbx_ai_infra/engine/exits.py's codes and meanings exactly; the other places that list the
    codes (troubleshooting, which points to the table, and --help) name the same codes."""
    assert _table(REPO / "docs" / "cli.md", "**Exit codes**") == {str(c): m for c, m in exits.MEANINGS.items()}
    section = (REPO / "docs" / "troubleshooting.md").read_text().split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    assert "(cli.md)" in section and all(f"`{c}`" in section for c in exits.MEANINGS)  # one table, pointed to
    from dbx_ai_infra.cli.commands.args import EXIT_CODES

    assert [int(line.split()[0]) for line in EXIT_CODES.splitlines()[1:] if line[:3].strip()] == list(exits.MEANINGS)
    assert len(set(exits.MEANINGS)) == len(exits.MEANINGS) == 5
