"""``python -m stackplan``: offline preview, policy check and cost review of a stack.

Exit codes (a public contract): 0 success; 1 a mandatory policy violation (``preview``, ``check``) or a
failure that is not the input's fault; 2 invalid input (the message on stderr names the file, the field and
the fix; nothing is written); 130 an interrupted run (Ctrl-C or SIGTERM; no file is left behind).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dbxtypes.errors import InputError, ProgramError, clip
from dbxtypes.plan import Plan, SizingLine, Violation
from dbxtypes.vocabulary import CLUSTER_POLICY

from .findings import Located
from .inputs import read_json
from .multi import StackRun, ordered, run_each, worst

EXIT_OK, EXIT_VIOLATIONS, EXIT_INVALID, EXIT_INTERRUPTED = 0, 1, 2, 130


def _policy_config(args: argparse.Namespace) -> Any:
    if not getattr(args, "policy_config", None):
        return None
    from policies.registry import load_policy_config

    return load_policy_config(read_json(args.policy_config, "policy config"), where=args.policy_config)


def build_plan(stack: str, *, policy_config: Any = None, with_policies: bool = True,
               prices: str | None = None, with_cost: bool = False) -> Plan:
    """Stack -> plan: run the program under mocks, then add violations (and costs)."""
    from policies.registry import load_policy_config
    from stackspec import load_stack

    from .engine import run_program

    loaded = load_stack(stack, limits=load_policy_config(policy_config).limits())
    plan = run_program(loaded)
    plan.assumptions = loaded.spec.usage.model_dump()
    if loaded.spec.serving is not None:  # an endpoint's own active hours, where the stack gives them
        plan.assumptions.update({f"serving_active_hours_per_month.{name}": e.active_hours_per_month
                                 for name, e in loaded.spec.serving.endpoints.items()
                                 if e.scale_to_zero and e.active_hours_per_month is not None})
    plan.sizing = [SizingLine.model_validate(w.sizing()) for w in loaded.resolved.workloads.values()]
    plan.sizing += [SizingLine.model_validate(e.sizing()) for e in loaded.resolved.endpoints.values()]
    if with_policies:
        from policies.registry import ALL_RULES, evaluate_plan

        from .exceptions import apply_exceptions

        plan.violations, notes = apply_exceptions(
            evaluate_plan(plan, policy_config), loaded.spec.exceptions, rules=[r.name for r in ALL_RULES],
            resources=[r.name for r in plan.resources], today=datetime.now(UTC).date(),
            source=plan.stack_file or stack)
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
    if with_cost:
        from pricing import cheaper_gpu_advice, serving_comparison
        from pricing import price_plan as cost_of

        from .costing import price_book

        book = price_book(loaded, prices)
        plan.cost = cost_of(plan, book)
        plan.advice = cheaper_gpu_advice(plan, book) + serving_comparison(plan, book)
    return plan


def base_plan(base: str, *, policy_config: Any, prices: str | None) -> Plan:
    """--against: a saved plan JSON (priced now if it carries no costs), or a stack name or file."""
    from .costing import price_plan, read_plan_file

    if base.endswith(".json"):
        plan = read_plan_file(base)
        if plan.cost is None:
            plan.cost = price_plan(plan, None, prices)
        return plan
    return build_plan(base, policy_config=policy_config, prices=prices, with_cost=True)


_INPUT_ARGS = ("stack", "against", "prices", "cluster_json", "cluster_policy", "policy_config", "usage")


def _inputs(args: argparse.Namespace) -> list[str]:
    """The files this run reads (``--out`` may not be one of them); a stack name means its stack file."""
    from stackspec import available_stacks, stack_file_for

    found = []
    for name in _INPUT_ARGS:
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


_ARGS: argparse.Namespace | None = None


def _emit(text: str, out: str | None) -> None:
    from .output import write_text

    write_text(text, out, _inputs(_ARGS) if _ARGS is not None else ())


def _has_mandatory(violations: list[Violation]) -> bool:
    return any(v.mandatory for v in violations)


def _stacks(args: argparse.Namespace) -> list[str]:
    """The stacks of this run: each ``--stack``, or every stack under ``stacks/`` with ``--all``."""
    from stackspec import available_stacks

    if getattr(args, "all", False):
        names = available_stacks()
        if not names:
            raise InputError.single("stacks/", "", "holds no Pulumi.<stack>.yaml file.", "add one, or pass --stack.")
        return names
    return list(dict.fromkeys(args.stack or []))


def _several(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "all", False)) or len(set(args.stack or [])) > 1


def _plan_run(stack: str, args: argparse.Namespace, config: Any, *, with_cost: bool) -> StackRun:
    plan = build_plan(stack, policy_config=config, prices=getattr(args, "prices", None), with_cost=with_cost)
    return StackRun(stack, plan.stack_file or stack, plan=plan,
                    exit=EXIT_VIOLATIONS if plan.has_mandatory else EXIT_OK)


def _error_doc(run: StackRun) -> dict[str, Any]:
    return {"stack": run.stack, "stack_file": run.source, "error": run.error}


def cmd_preview(args: argparse.Namespace) -> int:
    config = _policy_config(args)
    fmt = "json" if args.json else args.format
    runs = run_each(_stacks(args), lambda s: _plan_run(s, args, config, with_cost=True), what="preview",
                    keep_errors=_several(args))
    if fmt in FINDING_FORMATS:
        _emit(_findings_text(fmt, runs, config, suite="stackplan preview"), args.out)
    elif not _several(args):
        plan = runs[0].plan
        assert plan is not None
        if fmt == "json":
            _emit(json.dumps(plan.to_json(), indent=2, allow_nan=False), args.out)
        else:
            from .render import plan_table

            _emit(plan_table(plan), args.out)
    elif fmt == "json":
        docs = [r.plan.to_json() if r.plan else _error_doc(r) for r in runs]
        _emit(json.dumps({"stacks": docs}, indent=2, allow_nan=False), args.out)
    else:
        from .render import plan_table

        _emit("\n".join(plan_table(r.plan) if r.plan else r.error_line for r in runs), args.out)
    return worst(runs)


def finding_lines(plan: Plan, violations: list[Violation]) -> dict[tuple[str, str], int]:
    """Each finding's (policy, URN) -> the line of the stack field behind it: the first of the rule's
    ``stack_fields`` that the stack sets, in the resource's section or at the top; else the section the resource is
    built from; else ``config:`` (a default no line states)."""
    from dbxtypes.vocabulary import section_of_urn
    from policies.registry import ALL_RULES
    from stackspec import section_lines

    if not plan.stack_file or not Path(plan.stack_file).is_file():
        return {}
    lines = section_lines(Path(plan.stack_file))
    from .drift import DRIFT_STACK_FIELDS

    fields = {**{r.name: r.stack_fields for r in ALL_RULES}, **DRIFT_STACK_FIELDS}
    found = {}
    for v in violations:
        section = section_of_urn(v.urn) or ""
        if section == "serving":  # an endpoint's fields live under serving.endpoints.<name>
            endpoint = v.resource_name.removeprefix(f"{plan.stack}-serving-").removesuffix("-permissions")
            section = f"serving.endpoints.{endpoint}"
        candidates = [k for f in fields.get(v.policy, ()) for k in (f"{section}.{f}", f)]
        found[(v.policy, v.urn)] = next((lines[k] for k in candidates if k in lines), lines.get(section, lines[""]))
    return found


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


FINDING_FORMATS = ("sarif", "junit", "github")


def _located(runs: list[StackRun]) -> list[Located]:
    """Every finding of the runs, with the stack file and the line of the field behind it."""
    found = []
    for run in runs:
        if run.plan is None:
            continue
        violations = run.plan.violations or []
        lines = finding_lines(run.plan, violations)
        found += [Located(v, run.source, lines.get((v.policy, v.urn))) for v in violations]
    return found


def _findings_text(fmt: str, runs: list[StackRun], config: Any, *, suite: str,
                   located: list[Located] | None = None, source: str | None = None) -> str:
    """SARIF, JUnit or GitHub commands for the runs' findings (or for ``located`` ones, from a cluster JSON); a
    stack that failed to load is reported as an error of its file."""
    from policies.registry import ALL_RULES, load_policy_config

    from .audit import OWN_POLICY
    from .findings import RuleInfo, github_commands, junit_xml, sarif_log

    levels = load_policy_config(config)
    found = _located(runs) if located is None else located
    errors = [(r.source, r.error or "") for r in runs if r.error is not None]
    if fmt == "sarif":
        from .drift import DRIFT_RULES

        rules = [RuleInfo(r.name, r.description, r.remediation, levels.level(r) if levels.level(r) != "disabled"
                          else r.enforcement, enabled=levels.level(r) != "disabled") for r in ALL_RULES]
        rules += [RuleInfo(name, text, fix, "advisory") for name, text, fix in DRIFT_RULES
                  if any(f.violation.policy == name for f in found)]
        if any(f.violation.policy == OWN_POLICY for f in found):
            rules.append(RuleInfo(OWN_POLICY, "A cluster breaks the cluster policy it names (the policy is in the "
                                  "export).", "Edit the cluster to fit its policy, or change the policy.",
                                  "advisory"))
        log = sarif_log(found, rules, version=_version())
        log["runs"][0]["invocations"] = [{
            "executionSuccessful": not errors,
            "toolExecutionNotifications": [{
                "level": "error", "message": {"text": error},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": file}}}]} for file, error in errors],
        }]
        return json.dumps(log, indent=2, allow_nan=False) + "\n"
    if fmt == "junit":
        ran = [r.name for r in ALL_RULES if levels.level(r) != "disabled"]
        names = ", ".join(r.stack for r in runs)
        return junit_xml(found, ran, suite=f"{suite} {names or source}",
                         source=source or ", ".join(r.source for r in runs), errors=errors)
    return github_commands(found, errors)


def cmd_check(args: argparse.Namespace) -> int:
    config = _policy_config(args)
    fmt = "json" if args.json else args.format
    if args.stack and (args.cluster_json or args.workspace):
        return _check_drift(args, config, fmt)
    if args.cluster_json or args.workspace:
        from policies.exports import summary_text

        from .audit import audit_export_path, audit_items

        wanted = {"places": fmt in FINDING_FORMATS, "clusters": bool(args.cluster_policy)}
        if args.workspace:
            source, items = _read_live(args)
            audit = audit_items(items, config, **wanted)
        else:
            source, audit = args.cluster_json, audit_export_path(args.cluster_json, config, **wanted)
        violations, counts = audit.violations, audit.counts
        result: dict[str, Any] = {"source": source, "checked": counts,
                                  "violations": [v.to_json() for v in violations]}
        if args.cluster_policy:
            result["cluster_policy"] = _cluster_policy_results(audit.clusters, args.cluster_policy)
        if fmt == "json":
            _emit(json.dumps(result, indent=2, allow_nan=False), args.out)
        elif fmt in FINDING_FORMATS:
            _emit(_findings_text(fmt, [], config, suite="stackplan check", source=source,
                                 located=[Located(v, audit.files.get(v.urn, source), element=audit.labels.get(v.urn))
                                          for v in violations]),
                  args.out)
        else:
            from .render import violations_table

            text = f"Checked {source}: {summary_text(counts)}.\n" + violations_table(violations)
            if "cluster_policy" in result:
                text += _cluster_policy_text(result["cluster_policy"])
            _emit(text, args.out)
        failed = _has_mandatory(violations) or any(not r["allowed"] for r in result.get("cluster_policy", []))
        return EXIT_VIOLATIONS if failed and not args.soft_fail else EXIT_OK

    runs = run_each(_stacks(args), lambda s: _plan_run(s, args, config, with_cost=False), what="check",
                    keep_errors=_several(args))
    if fmt == "json":
        docs = [r.plan.to_json() if r.plan else _error_doc(r) for r in runs]
        _emit(json.dumps(docs[0] if not _several(args) else {"stacks": docs}, indent=2, allow_nan=False), args.out)
    elif fmt in FINDING_FORMATS:
        _emit(_findings_text(fmt, runs, config, suite="stackplan check"), args.out)
    else:
        from .render import violations_table

        parts = []
        for r in runs:
            if r.plan is None:
                parts.append(r.error_line)
                continue
            parts.append(f"Checked stack {r.plan.stack} ({r.plan.stack_file}): "
                         f"{_count(len(r.plan.resources), 'resource')}.\n" + violations_table(r.plan.violations or []))
        _emit("\n".join(parts), args.out)
    code = worst(runs)
    return EXIT_OK if args.soft_fail and code == EXIT_VIOLATIONS else code


def _check_drift(args: argparse.Namespace, config: Any, fmt: str) -> int:
    """`check --stack STACK --workspace|--cluster-json`: where the workspace differs from the stack."""
    from .audit import read_export
    from .drift import drift

    against, items = _read_live(args) if args.workspace else (args.cluster_json, read_export(args.cluster_json))
    plan = build_plan(args.stack[0], policy_config=config, with_policies=False)
    found = drift(plan, items)
    plan.violations = found
    counts = {k: sum(1 for v in found if v.policy == k) for k in ("drift-changed", "drift-missing",
                                                                   "drift-unowned-gpu")}
    if fmt == "json":
        doc = {"stack": plan.stack, "stack_file": plan.stack_file, "against": against, "counts": counts,
               "drift": [v.to_json() for v in found]}
        _emit(json.dumps(doc, indent=2, allow_nan=False), args.out)
    elif fmt in FINDING_FORMATS:
        files = {i.urn: i.source for i in items}
        stack_urns = {r.urn for r in plan.resources}
        lines = finding_lines(plan, [v for v in found if v.urn in stack_urns])
        located = [Located(v, plan.stack_file or args.stack[0], lines.get((v.policy, v.urn))) if v.urn in stack_urns
                   else Located(v, files.get(v.urn, against)) for v in found]
        _emit(_findings_text(fmt, [], config, suite=f"stackplan drift {plan.stack}", source=plan.stack_file,
                             located=located), args.out)
    else:
        from .render import violations_table

        head = (f"Drift of stack {plan.stack} ({plan.stack_file}) against {against}: "
                f"{_count(counts['drift-changed'], 'changed field')}, "
                f"{_count(counts['drift-missing'], 'missing resource')}, "
                f"{counts['drift-unowned-gpu']} GPU compute owned by no stack.\n")
        _emit(head + (violations_table(found, "Drift") if found else "No drift.\n"), args.out)
    return EXIT_OK


def _read_live(args: argparse.Namespace) -> tuple[str, list[Any]]:
    """`check --workspace`: ``workspace <host>`` and what was read through databricks-sdk (saved with
    ``--save-export``)."""
    from policies.exports import export_items

    from .workspace import read_workspace, save_export

    host, doc = read_workspace(args.profile, progress=sys.stderr.isatty())
    if args.save_export:
        for path in save_export(doc, args.save_export):
            print(f"wrote {path}", file=sys.stderr)
    return f"workspace {host}", export_items(doc, f"workspace {host}")


def _cluster_policy_results(clusters: list[Mapping[str, Any]], policy_path: str) -> list[dict[str, Any]]:
    from dbxtypes.shape import shapes_of_resource
    from dbxtypes.vocabulary import CLUSTER
    from guardrails import DefinitionError, evaluate_shape, parse_definition

    doc = read_json(policy_path, "cluster policy")
    if isinstance(doc, dict) and isinstance(doc.get("policies"), list) and "definition" not in doc:
        names = [str(p.get("name")) for p in doc["policies"] if isinstance(p, dict) and p.get("name")]
        raise InputError.single(
            policy_path, "policies", f"is a list of {len(doc['policies'])} policies (the List policies response).",
            "pass one policy: its object or its definition, e.g. `jq '.policies[0]'`"
            + (f"; the names here: {clip(', '.join(names))}" if names else "") + ".")
    # Accept a bare definition, or a policy object as the Cluster Policies API returns it.
    definition = doc.get("definition", doc) if isinstance(doc, dict) else doc
    try:
        definition = parse_definition(definition)
    except DefinitionError as exc:
        raise InputError(policy_path, str(exc)) from None
    results = []
    for index, cluster in enumerate(clusters):
        outcome = evaluate_shape(definition, shapes_of_resource(CLUSTER, cluster, source="api")[0])
        results.append({
            "cluster": cluster.get("cluster_name") or cluster.get("cluster_id") or f"#{index}",
            "allowed": outcome.allowed,
            "violations": [{"path": v.path, "limit": v.limit, "message": v.message} for v in outcome.violations],
            "unchecked": list(outcome.unchecked),
        })
    return results


def _cluster_policy_text(results: list[dict[str, Any]]) -> str:
    lines = []
    for r in results:
        verdict = "allowed" if r["allowed"] else "refused"
        lines.append(f"Cluster policy: {r['cluster']}: {verdict}")
        lines += [f"  - {v['message']}" for v in r["violations"]]
        lines += [f"  - not checked: {u}" for u in r["unchecked"]]
    return "\n".join(lines) + "\n"


def cmd_export_policies(args: argparse.Namespace) -> int:
    plan = build_plan(args.stack, policy_config=_policy_config(args), with_policies=False)
    policies = [r for r in plan.resources if r.type == CLUSTER_POLICY]
    if not policies:
        raise InputError.single(plan.stack_file or plan.stack, "dbx-ai-infra:cluster_policies.enabled",
                                "is false, so the stack makes no cluster policy.", "enable it to export definitions.")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise InputError.single(args.out, "--out", "exists and is not a directory.", "pass a directory for --out.")
    out.mkdir(parents=True, exist_ok=True)
    for r in policies:
        definition = json.loads(r.inputs["definition"])
        _emit(json.dumps(definition, indent=2, sort_keys=True), str(out / f"{r.inputs['name']}.json"))
        print(f"wrote {out / (r.inputs['name'] + '.json')}", file=sys.stderr)
    return EXIT_OK


def _base_for(stack: str, args: argparse.Namespace) -> str | None:
    """The base a stack's cost is compared with (``stack``: its name): ``--against`` itself, or ``DIR/STACK.json``
    when it is a directory of base plans (a stack with no file there is new: no diff)."""
    if not args.against:
        return None
    against = Path(args.against)
    if against.is_dir():
        base = against / f"{stack}.json"
        return str(base) if base.is_file() else None
    if _several(args):
        raise InputError.single(args.against, "--against", "is one base, but this run prices several stacks.",
                                "pass a directory of base plans, STACK.json each (`preview --json` on the base "
                                "branch writes them).")
    return str(args.against)


def cmd_cost(args: argparse.Namespace) -> int:
    config = _policy_config(args)

    def work(stack: str) -> StackRun:
        run = _plan_run(stack, args, config, with_cost=True)
        run.exit = EXIT_OK
        assert run.plan is not None
        run.base = _base_for(run.plan.stack, args)
        if run.base is not None:
            from pricing import diff_costs

            run.diff = diff_costs(base_plan(run.base, policy_config=config, prices=args.prices), run.plan)
        return run

    runs = run_each(_stacks(args), work, what="cost", keep_errors=_several(args))
    if not _several(args):
        plan, diff = runs[0].plan, runs[0].diff
        assert plan is not None
        if args.format == "json":
            _emit(json.dumps(_cost_doc(plan, diff), indent=2, allow_nan=False), args.out)
        elif args.format in ("markdown", "html"):
            from .reports import render_html, render_markdown

            _emit((render_markdown if args.format == "markdown" else render_html)(plan, diff), args.out)
        else:
            from .render import diff_table, plan_table

            _emit(plan_table(plan) + (diff_table(diff) if diff else ""), args.out)
        return EXIT_OK
    if args.format == "json":
        docs = [_cost_doc(r.plan, r.diff) if r.plan else _error_doc(r) for r in runs]
        _emit(json.dumps({"stacks": docs}, indent=2, allow_nan=False), args.out)
    elif args.format in ("markdown", "html"):
        from .reports import render_combined

        _emit(render_combined(ordered(runs), html=args.format == "html", against=args.against), args.out)
    else:
        from .render import diff_table, plan_table

        _emit("\n".join((plan_table(r.plan) + (diff_table(r.diff) if r.diff else "")) if r.plan else
                        r.error_line for r in ordered(runs)), args.out)
    return worst(runs)


def _cost_doc(plan: Plan, diff: dict[str, Any] | None) -> dict[str, Any]:
    as_json = plan.to_json()
    return {"stack": plan.stack, "cost": as_json.get("cost"), "violations": as_json.get("violations"), "diff": diff}


_EXIT_CODES = """exit codes:
  0    success
  1    a mandatory policy violation (or a failure that is not the input's fault)
  2    invalid input: one message names the file, the field and the fix; nothing is written
  130  interrupted (Ctrl-C, SIGTERM); nothing is written
"""
EXAMPLES_PREVIEW = """examples:
  python -m stackplan preview --stack dev
  python -m stackplan preview --stack stacks/Pulumi.prod.yaml --json --out plan.json
  python -m stackplan preview --all --format sarif --out stackplan.sarif

"""
EXAMPLES_CHECK = """examples:
  python -m stackplan check --stack prod
  python -m stackplan check --stack dev --stack prod --format github
  python -m stackplan check --cluster-json clusters.json --cluster-policy policy.json

"""
EXAMPLES_COST = """examples:
  python -m stackplan cost --stack prod
  python -m stackplan cost --stack prod --against dev --format markdown --out cost.md
  python -m stackplan cost --all --against base-plans/ --format markdown --out report.md

"""
EXAMPLES_ADVISE = """examples:
  python -m stackplan advise --stack prod --usage exports/ --sla-p99-ms 800
  python -m stackplan advise --stack prod --usage exports/ --format html --out advice.html
  python -m stackplan advise --stack prod --emit-sql advise-sql/

"""
EXAMPLES_EXPORT = """examples:
  python -m stackplan export-policies --stack prod --out policies-out/

"""


def _version() -> str:
    """The project's version, from its one home: pyproject.toml."""
    import tomllib

    from stackspec.load import REPO_ROOT

    with open(REPO_ROOT / "pyproject.toml", "rb") as handle:
        return str(tomllib.load(handle)["project"]["version"])


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m stackplan",
                                  description="Offline preview, policy check and cost review of dbx-ai-infra stacks.",
                                  epilog=_EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    top.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = top.add_subparsers(dest="command", required=True)
    raw = argparse.RawDescriptionHelpFormatter

    def stacks_arg(p: argparse.ArgumentParser | argparse._MutuallyExclusiveGroup) -> None:
        p.add_argument("--stack", action="append", metavar="NAME|FILE",
                       help="a stack name (dev) or the path of a stack YAML file; repeat it for several stacks "
                            "(one combined report, the worst exit code)")
        p.add_argument("--all", action="store_true", help="every stack under stacks/")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--json", action="store_true", help="write JSON instead of a table")
        p.add_argument("--out", metavar="FILE", help="write to FILE (atomically) instead of stdout")
        p.add_argument("--policy-config", metavar="FILE",
                       help="policy config JSON: enforcement levels and thresholds, as Pulumi takes it")

    findings_help = ("sarif (SARIF 2.1.0 for code scanning), junit (JUnit XML for CI test reports) or github "
                     "(GitHub Actions annotations); each finding points at the stack field behind it")
    p = sub.add_parser("preview", formatter_class=raw, epilog=EXAMPLES_PREVIEW + _EXIT_CODES,
                       help="run the program offline; show resources, violations and costs")
    stacks_arg(p.add_mutually_exclusive_group(required=True))
    common(p)
    p.add_argument("--format", choices=["table", "json", *FINDING_FORMATS], default="table",
                   help="table (default), json (same as --json), " + findings_help)
    p.add_argument("--prices", metavar="FILE", help="price overrides (YAML)")
    p.set_defaults(func=cmd_preview)

    p = sub.add_parser("check", formatter_class=raw, epilog=EXAMPLES_CHECK + _EXIT_CODES,
                       help="evaluate the policies on stacks or on exported cluster JSON")
    group = p.add_mutually_exclusive_group()
    stacks_arg(group)
    p.add_argument("--workspace", action="store_true",
                   help="read the workspace live through databricks-sdk (its standard auth: the environment or "
                        "--profile; never a token on the command line)")
    p.add_argument("--profile", metavar="NAME", help="with --workspace: a ~/.databrickscfg profile")
    p.add_argument("--save-export", metavar="DIR",
                   help="with --workspace: also write what was read to DIR, for a later --cluster-json DIR")
    p.add_argument("--cluster-json", metavar="FILE",
                       help="a workspace export: Databricks API or CLI JSON of clusters, jobs, instance pools "
                            "(one object, lists, a mix, pages one after another), or a directory of such files")
    p.add_argument("--cluster-policy", metavar="POLICY.json",
                   help="with --cluster-json: also evaluate a cluster policy definition")
    common(p)
    p.add_argument("--format", choices=["table", "json", *FINDING_FORMATS], default="table",
                   help="table (default), json (same as --json), " + findings_help)
    p.add_argument("--soft-fail", action="store_true",
                   help="exit 0 whatever the policies find (the report still shows it); invalid input still exits 2")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("cost", formatter_class=raw, epilog=EXAMPLES_COST + _EXIT_CODES,
                       help="price stacks; with --against, what the change adds or removes")
    stacks_arg(p.add_mutually_exclusive_group(required=True))
    p.add_argument("--against", metavar="BASE",
                   help="a stack name, a stack file, a plan JSON saved earlier, or a directory of base plans "
                        "(STACK.json each; a stack with none there is new)")
    p.add_argument("--format", choices=["table", "json", "markdown", "html"], default="table",
                   help="table (default), json, markdown (a pull-request comment) or html (a standalone page)")
    p.add_argument("--prices", metavar="FILE", help="price overrides (YAML)")
    p.add_argument("--out", metavar="FILE", help="write to FILE (atomically) instead of stdout")
    p.add_argument("--policy-config", metavar="FILE", help="policy config JSON, as Pulumi takes it")
    p.set_defaults(func=cmd_cost)

    p = sub.add_parser("advise", formatter_class=raw, epilog=EXAMPLES_ADVISE + _EXIT_CODES,
                       help="read how the stack's compute ran (exports of system tables, GPU collector, events, "
                            "bill) and propose priced edits of the stack")
    p.add_argument("--stack", required=True, metavar="NAME|FILE",
                   help="a stack name (prod) or the path of a stack YAML file")
    p.add_argument("--usage", metavar="DIR",
                   help="the exports: clusters, node_timeline, gpu_timeline, cluster_events, usage, list_prices, "
                        "requests (CSV or Parquet, events as JSON; each optional but clusters)")
    p.add_argument("--sla-p99-ms", type=float, metavar="N",
                   help="request P99 latency SLA in ms (default: advise.sla_p99_ms of the policy config; none: "
                        "latency is not judged)")
    p.add_argument("--format", choices=["table", "json", "markdown", "html"], default="table",
                   help="table (default), json (same as --json), markdown, or html (a page with charts)")
    common(p)  # --json, --out, --policy-config (its advise section holds the thresholds)
    p.add_argument("--emit-sql", metavar="DIR",
                   help="write the same analysis as Databricks SQL over system tables to DIR (run it on a SQL "
                        "warehouse); with --usage, also advise locally")
    p.add_argument("--days", type=int, default=30, metavar="N", help="with --emit-sql: the window, days (default 30)")
    p.add_argument("--prices", metavar="FILE", help="price overrides (YAML)")
    p.set_defaults(func=cmd_advise)

    p = sub.add_parser("export-policies", formatter_class=raw, epilog=EXAMPLES_EXPORT + _EXIT_CODES,
                       help="write the stack's cluster-policy definitions as JSON files")
    p.add_argument("--stack", required=True, metavar="NAME|FILE",
                   help="a stack name (dev) or the path of a stack YAML file")
    p.add_argument("--out", required=True, metavar="DIR", help="directory for <policy-name>.json files")
    p.add_argument("--policy-config", metavar="FILE",
                   help="policy config JSON: its mandatory thresholds bound the definitions as they bound the stack "
                        "(max_autotermination_minutes caps the idle time a policy allows)")
    p.set_defaults(func=cmd_export_policies)
    return top


def cmd_advise(args: argparse.Namespace) -> int:
    from .advise.command import cmd_advise as advise

    return advise(args, emit=lambda text: _emit(text, args.out), policy_config=_policy_config(args))


def _usage_problem(args: argparse.Namespace) -> str | None:
    """Combinations of inputs that argparse cannot state: check's one source of clusters; advise's --usage."""
    if args.func is cmd_advise:
        if not args.usage and not args.emit_sql:
            return "nothing to read. Fix: pass --usage DIR (the exports), or --emit-sql DIR for the SQL."
        if args.days < 1:
            return "--days must be at least 1. Fix: pass e.g. --days 30."
        return None
    if args.func is not cmd_check:
        return None
    stacks = bool(args.stack or args.all)
    if args.cluster_json and args.workspace:
        return "--cluster-json and --workspace are two sources of clusters. Fix: pass one of them."
    if stacks and (args.cluster_json or args.workspace) and (args.all or len(set(args.stack)) > 1):
        return ("drift compares one stack with a workspace. Fix: pass one --stack with --workspace or "
                "--cluster-json.")
    if not stacks and not args.cluster_json and not args.workspace:
        return "nothing to check. Fix: pass --stack NAME, --all, --cluster-json FILE or --workspace."
    if (args.profile or args.save_export) and not args.workspace:
        return "--profile and --save-export go with --workspace. Fix: add --workspace."
    return None


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    problem = _usage_problem(args)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return EXIT_INVALID
    if getattr(args, "cluster_policy", None) and not (getattr(args, "cluster_json", None) or
                                                      getattr(args, "workspace", False)):
        print("error: --cluster-policy goes with --cluster-json or --workspace. Fix: add --cluster-json FILE.",
              file=sys.stderr)
        return EXIT_INVALID
    if getattr(args, "cluster_policy", None) and getattr(args, "format", None) in FINDING_FORMATS:
        print(f"error: --format {args.format} does not carry --cluster-policy results yet. Fix: use --format table "
              "or --json for the cluster-policy evaluation.", file=sys.stderr)
        return EXIT_INVALID
    from .output import check_out, cleanup_partial_outputs
    from .workspace import WorkspaceUnavailable

    global _ARGS
    _ARGS = args
    if getattr(args, "out", None) in (None, "-") and sys.stdout.isatty():
        from .render import fit_terminal

        # a person reading: tables as wide as the window, in colour unless NO_COLOR is set (no-color.org)
        fit_terminal(shutil.get_terminal_size().columns, colour=not os.environ.get("NO_COLOR"))
    try:
        if args.func is not cmd_export_policies and getattr(args, "out", None) is not None:
            check_out(args.out, _inputs(args))  # before any work: a bad --out changes nothing
        return args.func(args)
    except KeyboardInterrupt:
        cleanup_partial_outputs()
        print("interrupted: nothing was written.", file=sys.stderr)
        return EXIT_INTERRUPTED
    except RecursionError:
        print("error: an input is nested too deeply to read. Fix: pass a Databricks export or a stack file as "
              "written by their tools.", file=sys.stderr)
        return EXIT_INVALID
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except ProgramError as exc:
        print(f"error: the Pulumi program failed: {exc}", file=sys.stderr)
        return EXIT_VIOLATIONS
    except WorkspaceUnavailable as exc:
        print(f"error: {exc} (not the input's fault: try again later)", file=sys.stderr)
        return EXIT_VIOLATIONS
    except Exception as exc:  # noqa: BLE001 - the CLI prints a sentence, not a traceback
        if os.environ.get("STACKPLAN_DEBUG"):
            raise
        print(f"error: unexpected {type(exc).__name__}: {exc} (set STACKPLAN_DEBUG=1 for a traceback)",
              file=sys.stderr)
        return EXIT_VIOLATIONS
