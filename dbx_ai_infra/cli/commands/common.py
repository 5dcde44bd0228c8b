"""What the commands share: the files a run reads, the policy config, baselines, and writing a report. (The stacks of
a run and each one's trip through the pipeline are `dbx_ai_infra.cli.commands.stacks`'s: a workspace's audit loads
no stack.)"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.dbxtypes.stack_files import available_stacks, stack_file_for
from dbx_ai_infra.engine.inputs import read_json
from dbx_ai_infra.engine.output import check_out, write_text
from dbx_ai_infra.policies.registry import load_policy_config
from dbx_ai_infra.reports import baseline

#: The arguments that name files a run reads (``--out`` may not be one of them).
INPUT_ARGS = ("stack", "against", "prices", "cluster_json", "terraform_plan", "terraform", "var_file",
              "cluster_policy", "policy_config", "usage", "baseline", "exceptions")


def policy_config(args: argparse.Namespace) -> Any:
    """``--policy-config``, read and validated (a `dbx_ai_infra.policies.registry.PolicyConfig`; None when not
    given)."""
    if not getattr(args, "policy_config", None):
        return None

    config = load_policy_config(read_json(args.policy_config, "policy config"), where=args.policy_config)
    for note in config.notes(args.policy_config):  # retired rules it names: read, without effect
        print(f"note: {note}", file=sys.stderr)
    return config


#: What the reader of a directory input reads in it, by the name's ending: Terraform's loading rules (``*.tf``,
#: ``*.tf.json``, ``terraform.tfvars``, ``*.auto.tfvars``, their ``.json``: terraform v1.11) and an export's files
#: (``*.json``, `dbx_ai_infra.sources.audit.export_files`). Another directory (``--usage``) is taken as read whole.
DIRECTORY_READS = {"terraform": (".tf", ".tf.json", ".tfvars", ".tfvars.json"), "cluster_json": (".json",)}


def directory_reads(args: argparse.Namespace) -> dict[str, tuple[str, ...]]:
    """Each directory input of the run and the name endings its reader reads there (`DIRECTORY_READS`)."""
    return {value: endings for name, endings in DIRECTORY_READS.items()
            if isinstance(value := getattr(args, name, None), str) and Path(value).is_dir()}


def inputs(args: argparse.Namespace) -> list[str]:
    """The files this run reads; a stack name means its stack file."""
    found = []
    for name in INPUT_ARGS:
        given = getattr(args, name, None)
        values = given if isinstance(given, list) else [given]
        if name == "stack" and getattr(args, "all", False):
            values = available_stacks()
        for value in values:
            if not isinstance(value, str) or not value:
                continue
            if name in ("stack", "against") and not Path(value).exists():
                try:
                    value = str(stack_file_for(value))
                except InputError:
                    continue
            if Path(value).exists():
                found.append(value)
    return found


def emit(args: argparse.Namespace, text: str, out: str | None = None) -> None:
    """Write ``text`` to ``out`` (default ``--out``; stdout when neither), never over an input of the run."""
    write_text(text, out if out is not None else getattr(args, "out", None), inputs(args), directory_reads(args))


def fmt(args: argparse.Namespace) -> str:
    return "json" if getattr(args, "json", False) else str(args.format)


def with_baseline(args: argparse.Namespace, violations: list[Any], source_of: dict[str, str]) -> list[Any]:
    """``check --baseline FILE``: the findings marked against it (its fixed ones noted on stderr); else as given.
    ``source_of``: a finding's URN -> its stack (absent: a workspace export)."""
    if not getattr(args, "baseline", None):
        return violations

    held = baseline.read(args.baseline)
    sources = sorted(set(source_of.values())) or [baseline.WORKSPACE]
    for line in baseline.foreign(held, sources, args.baseline):
        print(f"note: {line}", file=sys.stderr)
    marked, fixed = baseline.apply(violations, held, sources)
    for line in baseline.fixed_lines(fixed, args.baseline):
        print(f"note: {line}", file=sys.stderr)
    counts = baseline.summary(marked, fixed)
    print(f"note: baseline {args.baseline}: {counts['new']} new, {counts['unchanged']} baselined, {counts['fixed']} "
          "fixed", file=sys.stderr)
    return marked


def write_baseline(args: argparse.Namespace, violations: list[Any], source_of: dict[str, str]) -> None:
    """``check --write-baseline FILE``: today's findings (before any --baseline marks them) as a baseline file, and
    the number of entries it holds (the same finding twice is one entry)."""
    if not getattr(args, "write_baseline", None):
        return

    text, count = baseline.document(violations, source_of)
    write_text(text, args.write_baseline, inputs(args), directory_reads(args))
    print(f"wrote {args.write_baseline}: {count} finding(s)", file=sys.stderr)


def check_baseline_out(args: argparse.Namespace) -> None:
    """``--write-baseline FILE`` checked like ``--out``, before any work."""
    if getattr(args, "write_baseline", None):
        check_out(args.write_baseline, inputs(args), "--write-baseline", directory_reads(args))
