"""GpuCollector: the GPU collector init script, uploaded to a Unity Catalog Volume for the clusters to run."""

from __future__ import annotations

import base64
from dataclasses import dataclass

import pulumi
import pulumi_databricks as databricks

from dbx_ai_infra.dbxtypes.vocabulary import GPU_COLLECTOR_TYPE

from ._common import child_options


@dataclass(frozen=True, kw_only=True)
class GpuCollectorArgs:
    #: The Volume directory (``/Volumes/<catalog>/<schema>/<volume>``) the samples are written to.
    volume_dir: str
    #: The Volume directory the script is uploaded to: the stack's code Volume, which only the deployer writes (the
    #: telemetry Volume is writable by everyone who runs a cluster, who could then replace the init script).
    script_dir: str
    #: The init script's text (the program reads dbx_ai_infra/collector/gpu_collector.sh; a component reads no file).
    script: str


class GpuCollector(pulumi.ComponentResource):
    """A ``databricks.File`` holding the collector script on the code Volume. ``script_path`` goes into the clusters'
    ``init_scripts``; ``timeline_dir`` is where the samples land (``GPU_TIMELINE_DIR``)."""

    script_path: str
    timeline_dir: str

    def __init__(self, name: str, args: GpuCollectorArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(GPU_COLLECTOR_TYPE, name, None, opts)
        self.script_path = f"{args.script_dir}/init/gpu_collector.sh"
        self.timeline_dir = f"{args.volume_dir}/gpu_timeline"
        databricks.File(f"{name}-script", path=self.script_path,
                        content_base64=base64.b64encode(args.script.encode()).decode(),
                        opts=child_options(self, opts))  # waits for the Volume it is written into
        self.register_outputs({"script_path": self.script_path, "timeline_dir": self.timeline_dir})
