"""Policy findings in the formats CI systems read: JUnit XML and GitHub Actions workflow commands.

JUnit: one ``<testsuite>`` per policy that was enabled, one ``<testcase>`` per finding (a mandatory finding is a
``<failure>``, an advisory one passes with its message in ``<system-out>``), and a passing ``<testcase>`` for a
policy with no finding, so a CI test tab lists every rule that ran. GitLab, Azure DevOps and Jenkins read this
shape (``testsuites/testsuite/testcase/failure``).

GitHub: one ``::error`` (mandatory) or ``::warning`` (advisory) workflow command per finding, annotated on the
input file, at the line of the stack section the resource is built from (``dbx-ai-infra:training``, ...; a
cluster JSON has no lines to point at); values are escaped as the Actions toolkit does (``%``, CR, LF; and
``:`` ``,`` in properties).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping

from dbxtypes.plan import Violation


def junit_xml(violations: Iterable[Violation], policies: Iterable[str], *, suite: str, source: str,
              lines: Mapping[str, int] | None = None) -> str:
    """The findings as JUnit XML; ``policies`` are the names of every policy that ran; ``lines`` maps a finding's
    URN to the line of ``source`` behind it."""
    lines = lines or {}
    findings = list(violations)
    root = ET.Element("testsuites", name=suite)
    for policy in dict.fromkeys([*policies, *(v.policy for v in findings)]):
        mine = [v for v in findings if v.policy == policy]
        failures = sum(1 for v in mine if v.mandatory)
        testsuite = ET.SubElement(root, "testsuite", name=policy, tests=str(max(1, len(mine))),
                                  failures=str(failures), errors="0", skipped="0")
        if not mine:
            ET.SubElement(testsuite, "testcase", name=f"{policy}: no finding", classname=policy, file=source)
        for v in mine:
            case = ET.SubElement(testsuite, "testcase", name=v.resource_name, classname=policy, file=source)
            if v.urn in lines:
                case.set("line", str(lines[v.urn]))
            if v.mandatory:
                failure = ET.SubElement(case, "failure", message=v.message, type="mandatory")
                failure.text = f"{v.urn}\n{v.message}"
            else:
                ET.SubElement(case, "system-out").text = f"advisory: {v.message}"
    tree = ET.ElementTree(root)
    ET.indent(tree)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def github_commands(violations: Iterable[Violation], *, source: str, lines: Mapping[str, int] | None = None) -> str:
    """One workflow command per finding: ``::error file=F,line=N,title=policy::resource: message``."""
    lines = lines or {}
    commands = []
    for v in violations:
        level = "error" if v.mandatory else "warning"
        at = f",line={lines[v.urn]}" if v.urn in lines else ""
        commands.append(f"::{level} file={_property(source)}{at},title={_property(v.policy)}::"
                        f"{_data(v.resource_name + ': ' + v.message)}")
    return "".join(command + "\n" for command in commands)
