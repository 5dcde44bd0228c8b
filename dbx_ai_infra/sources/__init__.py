"""The readers of outside documents: the one reader of what a workspace returns and of Terraform plans (`exports`,
whose items, `dbx_ai_infra.policies.items.ExportItem`, the rules judge), a workspace read live through databricks-sdk
(`workspace`), a workspace export judged by the rules (`audit`), a Terraform plan read and priced (`terraform`), a
stack against a workspace (`drift`), and the base a cost diff compares against (`bases`)."""
