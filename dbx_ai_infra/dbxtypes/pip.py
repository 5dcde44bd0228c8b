"""Reading pip requirements: is one pinned to a single version, and which project does it name.

The stack spec refuses unpinned libraries and the policy pack flags them: both read this one module.
"""

from __future__ import annotations

import re
from typing import Any

_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_EXTRAS = r"(?:\[\s*" + _NAME + r"(?:\s*,\s*" + _NAME + r")*\s*\])?"
_VERSION = r"(?:\d+!)?\d+(?:\.\d+)*(?:[._-]?(?:a|b|rc|alpha|beta|pre|preview|c)[._-]?\d*)?" \
           r"(?:[._-]?(?:post|rev|r)[._-]?\d*)?(?:[._-]?dev[._-]?\d*)?(?:\+[A-Za-z0-9.]+)?"
_MARKER = r"(?:\s*;.*)?"
_PINNED = re.compile(r"^\s*" + _NAME + r"\s*" + _EXTRAS + r"\s*===?\s*" + _VERSION + _MARKER + r"\s*$")
_URL = re.compile(r"^(?:" + _NAME + r"\s*" + _EXTRAS + r"\s*@\s*)?(?P<url>[A-Za-z][A-Za-z0-9+.-]*://\S+)\s*$")
_ARCHIVE_WITH_VERSION = re.compile(r"-\d+(?:\.\d+)*[^/]*\.(?:whl|tar\.gz|zip|tar\.bz2)$")
_VCS_REF = re.compile(r"@(?:[0-9a-f]{40}|v?\d+(?:\.\d+)+[A-Za-z0-9.+-]*)(?:#.*)?$")


def is_pinned_pip(spec: Any) -> bool:
    """True when a pip requirement names one exact version.

    ``torch==2.3.1``, ``transformers[torch]==4.41.2`` and ``pkg==1.2; python_version>='3.10'`` are pinned.
    ``torch``, ``torch>=2``, ``torch==2.*``, ``torch~=2.3`` and ``torch==2.3,<3`` are not. A URL counts as pinned only
    when it carries a version: an archive file named ``<name>-<version>...whl|tar.gz|zip``, or a VCS URL ending in
    ``@<40-hex commit>`` or ``@v1.2.3``.
    """
    if not isinstance(spec, str) or not spec.strip():
        return False
    if _PINNED.match(spec):
        return True
    url = _URL.match(spec.strip())
    if url:
        target = url.group("url")
        if "+" in target.split("://", 1)[0]:  # git+https://..., hg+ssh://...
            return bool(_VCS_REF.search(target))
        return bool(_ARCHIVE_WITH_VERSION.search(target.split("#", 1)[0].split("?", 1)[0]))
    return False


_REQUIREMENT_NAME = re.compile(r"^\s*(" + _NAME + r"\s*" + _EXTRAS + r")")
_BARE = re.compile(r"^" + _NAME + _EXTRAS + r"$")


def is_bare_pip(spec: Any) -> bool:
    """True when a pip requirement is a project name alone (``peft``, ``transformers[torch]``): no version, no
    specifier, no URL. A stack's workload takes the runtime's pin for such a name
    (`dbx_ai_infra.gpucatalog.runtime_libraries`)."""
    return isinstance(spec, str) and bool(_BARE.match(spec))


def pip_name(spec: Any) -> str | None:
    """The project name (with extras) a pip requirement starts with; ``None`` for URLs and non-strings."""
    if not isinstance(spec, str) or "://" in spec:
        return None
    match = _REQUIREMENT_NAME.match(spec)
    return match.group(1).replace(" ", "") if match else None




def pip_project(spec: Any) -> str | None:
    """The project a pip requirement installs, lower-cased and without extras: ``Torch[cuda]==2.8.0``, ``torch`` and
    ``torch @ https://...`` all name ``torch``; None for a bare URL (it names no project) and a non-string."""
    if not isinstance(spec, str):
        return None
    head, url, _ = spec.partition("://")
    if url and "@" not in head:
        return None
    name = pip_name(head.split("@", 1)[0]) if url else pip_name(spec)
    return name.split("[", 1)[0].lower() if name else None
