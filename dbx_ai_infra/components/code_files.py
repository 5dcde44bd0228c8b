"""CodeFiles: the code the stack runs with its clusters' identity (the training entry point, init scripts), uploaded
to the stack's code Volume, which only the deployer can write."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_databricks as databricks

from dbx_ai_infra.dbxtypes.vocabulary import CODE_FILES_TYPE

from ._common import child_options


@dataclass(frozen=True, kw_only=True)
class CodeFilesArgs:
    #: The code Volume's directory (``/Volumes/<catalog>/<schema>/<volume>``).
    directory: str
    #: File name -> its text (the program reads the files; a component reads none).
    files: Mapping[str, str]

    def __post_init__(self) -> None:
        if not self.directory.startswith("/Volumes/"):
            raise ValueError(f"directory must be a Unity Catalog Volume path (/Volumes/...), got {self.directory!r}")
        bad = [name for name in self.files if not name or "/" in name or name.startswith(".")]
        if bad:
            raise ValueError(f"file names are plain names in the directory, got {bad[0]!r}")


class CodeFiles(pulumi.ComponentResource):
    """One ``databricks.File`` per file, on the code Volume; ``paths`` maps each name to its ``/Volumes/...`` path.
    Each waits for what the component was told to wait for (the Volume it is written into)."""

    paths: dict[str, str]

    def __init__(self, name: str, args: CodeFilesArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(CODE_FILES_TYPE, name, None, opts)
        self.paths = {}
        for file_name, text in args.files.items():
            path = f"{args.directory}/{file_name}"
            databricks.File(f"{name}-{file_name.replace('.', '-')}", path=path,
                            content_base64=base64.b64encode(text.encode()).decode(), opts=child_options(self, opts))
            self.paths[file_name] = path
        self.register_outputs({"paths": self.paths})
