# A platform team's baseline for a workspace: a service principal's token, a GPU fine-tuning job owned by that
# service principal and granted to the ML team, a personal token someone added by hand. Expected: the personal
# token never expires (mandatory); the fine-tuning job is fixed-size on spot with fallback and owned by the service
# principal, so it passes; its model cache on DBFS is advised onto a Volume.

variable "sp_application_id" {
  default = "6f1c2b8e-4d3a-4b7e-9c21-0a5e8d7f3b64"
}

locals {
  tags = { workload = "fine-tuning", cost_center = "ml-platform" }
}

resource "databricks_obo_token" "deployer" {
  application_id   = var.sp_application_id
  comment          = "deployer, rotated monthly"
  lifetime_seconds = 2592000
}

resource "databricks_token" "someone" {
  comment = "added by hand"
}

resource "databricks_job" "finetune" {
  name = "finetune-llm"
  tags = local.tags

  job_cluster {
    job_cluster_key = "gpu"
    new_cluster {
      spark_version = "15.4.x-gpu-ml-scala2.12"
      node_type_id  = "g5.12xlarge"
      num_workers   = 1
      spark_env_vars = {
        CHECKPOINT_DIR = "/Volumes/ml/finetune/checkpoints"
        HF_HOME        = "/dbfs/models/hf"
      }
      aws_attributes {
        availability    = "SPOT_WITH_FALLBACK"
        first_on_demand = 1
      }
    }
  }

  task {
    task_key        = "train"
    job_cluster_key = "gpu"
    spark_python_task {
      python_file = "/Workspace/ml/finetune.py"
    }
  }
}

resource "databricks_permissions" "finetune" {
  job_id = databricks_job.finetune.id

  access_control {
    service_principal_name = var.sp_application_id
    permission_level       = "IS_OWNER"
  }
  access_control {
    group_name       = "ml-engineers"
    permission_level = "CAN_MANAGE_RUN"
  }
}
