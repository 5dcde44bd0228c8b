"""Reading pip requirements: is one pinned to a single version, and which project does it name.

The stack spec refuses unpinned libraries and the policy pack flags them: both read this one module.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

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
    ``torch @ https://...`` all name ``torch``; a bare URL names the project of its file (`_url_project`); None for
    a URL that names none, and a non-string."""
    if not isinstance(spec, str):
        return None
    head, url, _ = spec.partition("://")
    if url and "@" not in head:
        return _url_project(spec.strip())
    name = pip_name(head.split("@", 1)[0]) if url else pip_name(spec)
    return name.split("[", 1)[0].lower() if name else None


#: A wheel's or a source archive's file name: the project, then ``-`` and its version (PEP 427, PEP 625; an older
#: archive's name may hold ``-`` itself: the version is the first part that starts with a digit).
_ARCHIVE = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*?)-\d[^/]*\.(?:whl|tar\.gz|zip)$")


def _url_project(url: str) -> str | None:
    """The project a bare URL installs: its ``#egg=`` name, or the name its file's name starts with, as a wheel
    (``torch-2.8.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl``) or a source archive (``flash_attn-2.8.3.tar.gz``)
    spells it, normalized as PEP 503 does (``flash-attn``); None when it names none (a VCS URL without ``#egg=``, a
    file of another kind). Read here rather than with packaging.utils, whose import (its platform tags) costs every
    run's start-up about 20 ms."""
    location, _, fragment = url.partition("#")
    egg = re.search(r"(?:^|&)egg=(" + _NAME + ")", fragment)
    archive = _ARCHIVE.match(unquote(location.split("?", 1)[0].rsplit("/", 1)[-1]))
    name = egg.group(1) if egg else archive.group("name") if archive else None
    return re.sub(r"[-_.]+", "-", name).lower() if name else None
