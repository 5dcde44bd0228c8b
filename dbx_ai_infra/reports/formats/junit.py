"""``--format junit``: JUnit XML for CI test tabs: a suite per policy that ran, a failing case per violation, a passing
case per input where the policy found nothing."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence

from dbx_ai_infra.dbxtypes.text import printable
from dbx_ai_infra.reports.formats._located import enabled_rules, located_of
from dbx_ai_infra.reports.located import Located, place
from dbx_ai_infra.reports.reportdoc import Report


def junit_xml(violations: Sequence[Located], policies: Iterable[str], *, suite: str, sources: Sequence[str],
              errors: Sequence[tuple[str, str]] = ()) -> str:
    """The violations as JUnit XML; ``policies`` are the names of every policy that ran; a policy with no violation is
    one passing case per input of ``sources`` (each ``file`` attribute one path); ``errors`` (file, message) are
    inputs that could not be checked, each an ``<error>`` case of a ``stackplan`` suite."""
    def x(text: str) -> str:  # XML 1.0 refuses most control characters and the non-characters: escaped
        return printable(text)

    root = ET.Element("testsuites", name=x(suite))
    if errors:
        broken = ET.SubElement(root, "testsuite", name="stackplan", tests=str(len(errors)), failures="0",
                               errors=str(len(errors)), skipped="0")
        for file, message in errors:
            case = ET.SubElement(broken, "testcase", name=x(f"load {file}"), classname="stackplan", file=x(file))
            ET.SubElement(case, "error", message=x(message), type="invalid input").text = x(message)
    for policy in dict.fromkeys([*policies, *(f.violation.policy for f in violations)]):
        mine = [f for f in violations if f.violation.policy == policy]
        failures = sum(1 for f in mine if f.violation.mandatory)
        clean = [] if mine else list(sources)
        testsuite = ET.SubElement(root, "testsuite", name=x(policy), tests=str(len(mine) + len(clean)),
                                  failures=str(failures), errors="0", skipped="0")
        for source in clean:
            ET.SubElement(testsuite, "testcase", name=x(f"{policy}: no violation in {source}"), classname=x(policy),
                          file=x(source))
        for f in mine:
            v = f.violation
            case = ET.SubElement(testsuite, "testcase", name=x(place(f)), classname=x(policy), file=x(f.source))
            if f.line:
                case.set("line", str(f.line))
            if v.mandatory:
                failure = ET.SubElement(case, "failure", message=x(v.shown_message), type=v.level)
                failure.text = x(f"{v.urn}\n{v.shown_message}")
            else:
                ET.SubElement(case, "system-out").text = x(f"{v.level}: {v.shown_message}")
    tree = ET.ElementTree(root)
    ET.indent(tree)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def render(report: Report) -> str:
    found = located_of(report)
    return junit_xml(found.located, enabled_rules(report), suite=found.suite, sources=found.sources,
                     errors=found.errors)
