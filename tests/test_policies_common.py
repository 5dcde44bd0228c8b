"""The string helpers the rules share: pip pinning and plain-text secrets (dbx_ai_infra.policies.common, dbx_ai_infra.dbxtypes.pip)."""

from __future__ import annotations

import pytest

from dbx_ai_infra.policies.common import (
    is_pinned_pip,
    is_secret_reference,
    looks_like_secret,
    looks_like_secret_key,
    looks_like_secret_value,
    pip_name,
)


@pytest.mark.parametrize("spec,pinned", [
    ("torch==2.3.1", True),
    ("transformers[torch]==4.41.2", True),
    ("transformers[torch,sentencepiece]==4.41.2", True),
    ("pkg[extra]==1.2", True),
    ("vllm==0.6.3.post1", True),
    ("accelerate==1.0.0rc1", True),
    ("torch==2.3.1+cu121", True),
    ("numpy==1.26.4; python_version >= '3.10'", True),
    (" scipy == 1.13.0 ", True),
    ("torch", False),
    ("torch>=2.0", False),
    ("torch==2.*", False),
    ("torch~=2.3", False),
    ("torch==2.3,<3", False),
    ("torch!=2.3", False),
    ("", False),
    (None, False),
    ("https://example.com/simple/torch/", False),
    ("git+https://github.com/huggingface/peft.git", False),
    ("git+https://github.com/huggingface/peft.git@main", False),
    ("git+https://github.com/huggingface/peft.git@v0.12.0", True),
    ("peft @ git+https://github.com/huggingface/peft.git@" + "a" * 40, True),
    ("https://files.example.com/pkg-1.2.3-py3-none-any.whl", True),
    ("mypkg @ https://files.example.com/mypkg.whl", False),
])
def test_is_pinned_pip(spec, pinned: bool) -> None:
    assert is_pinned_pip(spec) is pinned


@pytest.mark.parametrize("key,secret", [
    ("HF_TOKEN", True), ("DATABRICKS_TOKEN", True), ("DB_PASSWORD", True), ("WANDB_API_KEY", True),
    ("OPENAI_APIKEY", True), ("AWS_SECRET_ACCESS_KEY", True), ("AWS_ACCESS_KEY_ID", True),
    ("spark.hadoop.fs.s3a.secret.key", True), ("spark.hadoop.fs.s3a.access.key", True),
    ("fs.azure.account.key.myacct.dfs.core.windows.net", True), ("SSH_PRIVATE_KEY", True), ("clientSecret", True),
    ("TOKENIZERS_PARALLELISM", False), ("HF_HOME", False), ("PYSPARK_PYTHON", False), ("KEYRING_BACKEND", False),
    ("spark.sql.shuffle.partitions", False), (3, False),
])
def test_looks_like_secret_key(key, secret: bool) -> None:
    assert looks_like_secret_key(key) is secret


def test_secret_values_and_references() -> None:
    assert looks_like_secret_value("dapi" + "0a" * 16) == "a Databricks personal access token"
    assert looks_like_secret_value("AKIA" + "Z" * 16) == "an AWS access key id"
    assert looks_like_secret_value("-----BEGIN RSA PRIVATE KEY-----\nabc") == "a private key"
    assert looks_like_secret_value("hello") is None and looks_like_secret_value(5) is None
    assert is_secret_reference("{{secrets/ml/hf}}") and is_secret_reference("Bearer {{secrets/ml/hf}}")
    assert not is_secret_reference("{{secrets/ml}}")
    assert looks_like_secret("HF_TOKEN", "hf_x") and looks_like_secret("X", "dapi" + "1" * 32)
    assert looks_like_secret("HF_TOKEN", "{{secrets/a/b}}") is None
    assert looks_like_secret("USE_AUTH_TOKEN", "true") is None
    assert looks_like_secret("TOKEN_PATH", "/Volumes/a/b/c/token") is None
    assert "hf_x" not in looks_like_secret("HF_TOKEN", "hf_x")


@pytest.mark.parametrize("spec,name", [
    ("torch>=2", "torch"), ("transformers[torch] ~= 4.4", "transformers[torch]"), ("peft", "peft"),
    ("git+https://github.com/x/y.git", None), (None, None), ("", None),
])
def test_pip_name(spec, name) -> None:
    assert pip_name(spec) == name


@pytest.mark.parametrize("spec,project", [
    ("Torch[cuda]==2.8.0", "torch"), ("transformers[torch] ~= 4.4", "transformers"), ("peft", "peft"),
    ("torch @ https://example.com/torch-2.8.0-cp312-none-any.whl", "torch"),
    # a bare URL names the project of its file: a wheel (PyTorch's own index quotes the local version's "+"), a
    # source archive, or a VCS URL's #egg= fragment; nothing else names one
    ("https://example.com/torch-2.8.0-cp312-none-any.whl", "torch"),
    ("https://download.pytorch.org/whl/cu128/torch-2.8.0%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl", "torch"),
    ("https://files.example.com/flash_attn-2.8.3.tar.gz?sig=1", "flash-attn"),
    ("https://example.com/Flash-Attn-2.8.3.zip", "flash-attn"), ("https://x/w/peft-0.17.0-1-py3-none-any.whl", "peft"),
    ("git+https://github.com/huggingface/peft.git@v0.17.0#egg=PEFT", "peft"),
    ("git+https://github.com/x/y.git", None), ("https://example.com/not-a-wheel.whl", None),
    ("https://example.com/requirements.txt", None), (None, None), ("", None),
])
def test_pip_project(spec, project) -> None:
    from dbx_ai_infra.dbxtypes.pip import pip_project

    assert pip_project(spec) == project
