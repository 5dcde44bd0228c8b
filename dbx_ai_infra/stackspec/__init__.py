"""The stack spec: the only place that reads a stack's settings (stack YAML or Pulumi config). Where stack files are
and the line a setting is on: `dbx_ai_infra.dbxtypes.stack_files` (named here too, for the callers that already load
the spec)."""

from dbx_ai_infra.dbxtypes.stack_files import available_stacks, section_lines, stack_file_for

from .load import LoadedStack, load_from_pulumi, load_stack, spec_from_config
from .models import StackSpec
from .resolve import ResolvedStack, Workload, resolve

__all__ = ["LoadedStack", "ResolvedStack", "StackSpec", "Workload", "available_stacks", "load_from_pulumi",
           "load_stack", "resolve", "section_lines", "spec_from_config", "stack_file_for"]
