"""Pulumi components for Databricks AI compute and storage. One public component per module."""

from ._common import AccessArgs
from .cluster_policies import ClusterPolicies, ClusterPoliciesArgs
from .code_files import CodeFiles, CodeFilesArgs
from .dev_cluster import DevCluster, DevClusterArgs
from .gpu_collector import GpuCollector, GpuCollectorArgs
from .inference_cluster import InferenceCluster, InferenceClusterArgs
from .instance_pool import GpuInstancePool, GpuInstancePoolArgs
from .provisioned_throughput import ProvisionedThroughputEndpoint, ProvisionedThroughputEndpointArgs
from .serverless_training import ServerlessGpuTraining, ServerlessGpuTrainingArgs
from .serving_endpoint import ServingEndpoint, ServingEndpointArgs, create_timeout_minutes
from .training_cluster import TrainingCluster, TrainingClusterArgs, TrainingJobArgs
from .unity_catalog import (
    GrantArgs,
    StorageCredentialArgs,
    UnityCatalogStorage,
    UnityCatalogStorageArgs,
    VolumeArgs,
    volume_path,
)

__all__ = ["AccessArgs", "ClusterPolicies", "ClusterPoliciesArgs", "CodeFiles", "CodeFilesArgs", "DevCluster",
           "DevClusterArgs", "GpuCollector", "GpuCollectorArgs", "GpuInstancePool", "GpuInstancePoolArgs", "GrantArgs",
           "InferenceCluster", "InferenceClusterArgs", "ProvisionedThroughputEndpoint",
           "ProvisionedThroughputEndpointArgs", "ServerlessGpuTraining", "ServerlessGpuTrainingArgs", "ServingEndpoint",
           "ServingEndpointArgs", "StorageCredentialArgs", "TrainingCluster", "TrainingClusterArgs", "TrainingJobArgs",
           "UnityCatalogStorage", "UnityCatalogStorageArgs", "VolumeArgs", "create_timeout_minutes",
           "volume_path"]
