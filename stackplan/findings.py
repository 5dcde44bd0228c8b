"""Policy findings in the formats CI systems read: JUnit XML and GitHub Actions workflow commands.

JUnit: one ``<testsuite>`` per policy that was enabled, one ``<testcase>`` per finding (a mandatory finding is a
``<failure>``, an advisory one passes with its message in ``<system-out>``), and a passing ``<testcase>`` for a
policy with no finding, so a CI test tab lists every rule that ran. GitLab, Azure DevOps and Jenkins read this
shape (``testsuites/testsuite/testcase/failure``).

GitHub: one ``::error`` (mandatory) or ``::warning`` (advisory) workflow command per finding, annotated on the
input file; values are escaped as the Actions toolkit does (``%``, CR, LF; and ``:`` ``,`` in properties).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable

from dbxtypes.plan import Violation


def junit_xml(violations: Iterable[Violation], policies: Iterable[str], *, suite: str, source: str) -> str:
    """The findings as JUnit XML; ``policies`` are the names of every policy that ran."""
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
            case = ET.SubElement(testsuite, "testcase", name=f"{v.resource_name}", classname=policy, file=source)
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


def github_commands(violations: Iterable[Violation], *, source: str) -> str:
    """One workflow command per finding: ``::error file=F,title=policy::resource: message``."""
    lines = []
    for v in violations:
        level = "error" if v.mandatory else "warning"
        lines.append(f"::{level} file={_property(source)},title={_property(v.policy)}::"
                     f"{_data(v.resource_name + ': ' + v.message)}")
    return "".join(line + "\n" for line in lines)
