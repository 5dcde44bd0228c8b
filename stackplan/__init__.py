"""The offline engine: preview, check and price a stack without a cloud account or the Pulumi CLI."""
