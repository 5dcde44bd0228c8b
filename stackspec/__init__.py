"""The stack spec: the only place that reads stack YAML and Pulumi config."""

from .errors import Problem, StackSpecError
from .load import (PROJECT, LoadedStack, available_stacks, load_from_pulumi, load_stack, spec_from_config,
                   stack_file_for)
from .models import WORKLOAD_KIND, StackSpec
from .resolve import ResolvedStack, Workload, resolve

__all__ = ["PROJECT", "WORKLOAD_KIND", "LoadedStack", "Problem", "ResolvedStack", "StackSpec", "StackSpecError", "Workload",
           "available_stacks", "load_from_pulumi", "load_stack", "resolve", "spec_from_config", "stack_file_for"]
