"""The stack spec: the only place that reads stack YAML and Pulumi config."""

from .load import (
                   LoadedStack,
                   available_stacks,
                   load_from_pulumi,
                   load_stack,
                   section_lines,
                   spec_from_config,
                   stack_file_for,
)
from .models import StackSpec
from .resolve import ResolvedStack, Workload, resolve

__all__ = ["LoadedStack", "ResolvedStack", "StackSpec", "Workload", "available_stacks", "section_lines",
           "load_from_pulumi", "load_stack", "resolve", "spec_from_config", "stack_file_for"]
